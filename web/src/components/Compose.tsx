import { useEffect, useState } from 'preact/hooks';
import { api, ApiFailure, ok } from '../api/client';
import { termOf } from '../lib/narrow';
import { narrow } from '../state/navigation';
import { channelByName, channelName, me, realm, settings } from '../state/store';

/**
 * Writing a message: to the open channel and topic or direct conversation,
 * or to a channel and topic typed here. Ctrl+Enter sends; Enter sends too
 * when the user's `enter_sends` setting says so.
 */
export function Compose() {
  const n = narrow.value;
  const channelTerm = termOf(n, 'channel');
  const topicTerm = termOf(n, 'topic');
  const dmTerm = termOf(n, 'dm');
  const [channel, setChannel] = useState('');
  const [topic, setTopic] = useState('');
  const [content, setContent] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  useEffect(() => {
    setChannel(typeof channelTerm?.operand === 'number' ? channelName(channelTerm.operand) : '');
    setTopic(topicTerm ? String(topicTerm.operand) : '');
    setError(null);
  }, [JSON.stringify(n)]);

  const toDm = Array.isArray(dmTerm?.operand) ? (dmTerm.operand as number[]) : null;

  async function send(): Promise<void> {
    if (!content.trim() || sending) return;
    setSending(true);
    setError(null);
    try {
      if (toDm) {
        const to = toDm.length ? toDm : [me.value?.user_id ?? 0];
        await ok(api.POST('/messages', { body: { type: 'direct', to: JSON.stringify(to), content } }));
      } else {
        const target = channelByName(channel);
        if (!target) throw new ApiFailure(400, 'BAD_REQUEST', `No channel named "${channel}" among yours`);
        await ok(api.POST('/messages', { body: { type: 'channel', to: target.stream_id, topic, content } }));
      }
      setContent('');
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setSending(false);
    }
  }

  function onKeyDown(e: KeyboardEvent): void {
    if (e.key !== 'Enter' || e.shiftKey || e.isComposing) return;
    if (e.ctrlKey || e.metaKey || settings.value.enter_sends === true) {
      e.preventDefault();
      void send();
    }
  }

  return (
    <form
      class="compose"
      aria-label="Compose"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      {!toDm && (
        <div class="compose-target">
          <label>
            <span class="visually-hidden">Channel</span>
            <input
              name="channel"
              placeholder="Channel"
              value={channel}
              onInput={(e) => setChannel(e.currentTarget.value)}
              list="channel-names"
            />
          </label>
          <span aria-hidden="true">›</span>
          <label>
            <span class="visually-hidden">Topic</span>
            <input
              name="topic"
              placeholder="Topic"
              maxLength={realm.value.maxTopicLength}
              value={topic}
              onInput={(e) => setTopic(e.currentTarget.value)}
            />
          </label>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <label class="visually-hidden" for="compose-content">
        Message
      </label>
      <textarea
        id="compose-content"
        name="content"
        rows={3}
        placeholder={toDm ? 'Message this conversation' : 'Message'}
        maxLength={realm.value.maxMessageLength}
        value={content}
        onInput={(e) => setContent(e.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <div class="compose-buttons">
        <button type="submit" disabled={sending || !content.trim()}>
          Send
        </button>
      </div>
    </form>
  );
}
