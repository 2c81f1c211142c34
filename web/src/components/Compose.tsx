import { withEmojiGlyphs } from '../lib/emoji';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiFailure, ok } from '../api/client';
import { narrowKey } from '../lib/narrow';
import {
  clearDraft,
  content,
  focusRequest,
  saveDraft,
  setTarget,
  startDirectMessage,
  target,
  targetOfNarrow,
  type Target,
} from '../state/compose';
import { narrow } from '../state/navigation';
import { channelByName, me, realm, settings, subscriptions } from '../state/store';
import { COMPOSE_TOPICS_MAX_AGE_MS, loadTopics, topicsByChannel } from '../state/topics';
import { typingNotifier, type TypingTo } from '../state/typing-notices';
import { linkText, uploadFile, uploadingText } from '../state/uploads';
import { ComposeText } from './ComposeText';
import { RecipientPicker } from './RecipientPicker';
import { TypingNotice } from './TypingNotice';

/** Where a typing notice for a target goes, if it can go anywhere yet. */
function typingTo(t: Target): TypingTo | null {
  // The user's settings may keep their typing to themselves, per kind of conversation, as in Zulip.
  if (t.kind === 'dm')
    return t.to.length && settings.value.send_private_typing_notifications !== false ? { type: 'direct', to: t.to } : null;
  if (settings.value.send_stream_typing_notifications === false) return null;
  const channel = channelByName(t.channel);
  return channel ? { type: 'channel', stream_id: channel.stream_id, topic: t.topic } : null;
}

let uploadCount = 0;

/**
 * Writing a message: to the open channel and topic or direct conversation,
 * to a reply's (state/compose.ts), or to people or a channel chosen here.
 * Ctrl/Cmd+Enter sends; Enter too when the user's `enter_sends` setting
 * says so. Files dropped on the box, pasted, or chosen with the button are
 * uploaded and linked; the preview shows the server's rendering.
 */
export function Compose() {
  const n = narrow.value;
  const t = target.value;
  const text = content.value;
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [preview, setPreview] = useState<{ html: string } | 'loading' | null>(null);
  const [dragging, setDragging] = useState(false);
  const field = useRef<HTMLTextAreaElement>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  // Opening a conversation writes to it, with its own draft; leaving one ends typing in it.
  useEffect(() => {
    typingNotifier.stop();
    const next = targetOfNarrow(n);
    if (next) setTarget(next);
    setError(null);
  }, [narrowKey(n)]);

  useEffect(() => {
    if (focusRequest.value === 0) return;
    setPreview(null);
    field.current?.focus();
  }, [focusRequest.value]);

  useEffect(
    () => () => {
      saveDraft();
      typingNotifier.stop();
    },
    [],
  );

  const channel = t.kind === 'channel' ? channelByName(t.channel) : undefined;

  function onTyped(value: string): void {
    const to = typingTo(target.value);
    if (to) typingNotifier.typed(JSON.stringify(to), to, value.trim() === '');
  }

  async function send(): Promise<void> {
    const body = content.value;
    if (!body.trim() || sending) return;
    const current = target.value;
    setError(null);
    if (current.kind === 'dm' && current.to.length === 0) {
      setError('Choose at least one person to send this to.');
      return;
    }
    setSending(true);
    typingNotifier.stop();
    try {
      if (current.kind === 'dm') {
        await ok(api.POST('/messages', { body: { type: 'direct', to: JSON.stringify(current.to), content: body } }));
      } else {
        const to = channelByName(current.channel);
        if (!to) throw new ApiFailure(400, 'BAD_REQUEST', `You are not subscribed to a channel named "${current.channel}".`);
        await ok(api.POST('/messages', { body: { type: 'channel', to: to.stream_id, topic: current.topic, content: body } }));
      }
      clearDraft();
      setPreview(null);
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

  /** Puts text at the caret of the message field (or at the end when it has none). */
  function insertAtCaret(insert: string): void {
    const el = field.current;
    const value = content.value;
    const at = el && document.activeElement === el ? (el.selectionStart ?? value.length) : value.length;
    const before = value.slice(0, at);
    const pad = before && !/\s$/.test(before) ? ' ' : '';
    content.value = `${before}${pad}${insert}${value.slice(at)}`;
  }

  async function upload(files: File[]): Promise<void> {
    setPreview(null);
    for (const file of files) {
      const placeholder = uploadingText(file.name, ++uploadCount);
      insertAtCaret(`${placeholder} `);
      try {
        const stored = await uploadFile(file);
        content.value = content.value.replace(placeholder, `[${linkText(stored.name)}](${stored.url})`);
      } catch (e) {
        content.value = content.value.replace(`${placeholder} `, '').replace(placeholder, '');
        setError(`Could not upload ${file.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  async function togglePreview(): Promise<void> {
    if (preview) {
      setPreview(null);
      queueMicrotask(() => field.current?.focus());
      return;
    }
    setPreview('loading');
    try {
      const r = await ok(api.POST('/messages/render', { body: { content: content.value } }));
      setPreview({ html: r.rendered });
    } catch (e) {
      setPreview(null);
      setError(e instanceof Error ? e.message : String(e));
    }
  }

  const topics = channel ? (topicsByChannel.value.get(channel.stream_id) ?? []) : [];
  const uploading = text.includes('[Uploading ');

  return (
    <form
      class={`compose ${dragging ? 'dragging' : ''}`}
      aria-label="Compose"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
      onDragOver={(e) => {
        if (!e.dataTransfer?.types.includes('Files')) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        const files = [...(e.dataTransfer?.files ?? [])];
        setDragging(false);
        if (!files.length) return;
        e.preventDefault();
        void upload(files);
      }}
    >
      <div class="compose-target">
        {t.kind === 'dm' ? (
          <RecipientPicker to={t.to} />
        ) : (
          <>
            <label class="visually-hidden" for="compose-channel">
              Channel
            </label>
            <input
              id="compose-channel"
              name="channel"
              placeholder="Channel"
              autocomplete="off"
              value={t.channel}
              onInput={(e) => setTarget({ kind: 'channel', channel: e.currentTarget.value, topic: t.topic }, true)}
              list="compose-channel-names"
            />
            <datalist id="compose-channel-names">
              {subscriptions.value.map((s) => (
                <option key={s.stream_id} value={s.name} />
              ))}
            </datalist>
            <span aria-hidden="true">›</span>
            <label class="visually-hidden" for="compose-topic">
              Topic
            </label>
            <input
              id="compose-topic"
              name="topic"
              placeholder="Topic"
              autocomplete="off"
              maxLength={realm.value.maxTopicLength}
              value={t.topic}
              list="compose-topic-names"
              onFocus={() => channel && void loadTopics(channel.stream_id, COMPOSE_TOPICS_MAX_AGE_MS).catch(() => undefined)}
              onInput={(e) => setTarget({ kind: 'channel', channel: t.channel, topic: e.currentTarget.value }, true)}
            />
            <datalist id="compose-topic-names">
              {topics.map((name) => (
                <option key={name} value={name} />
              ))}
            </datalist>
          </>
        )}
        <button
          type="button"
          class="switch-target"
          onClick={() => {
            if (t.kind === 'channel') startDirectMessage();
            else {
              const fromNarrow = targetOfNarrow(narrow.value);
              setTarget(fromNarrow?.kind === 'channel' ? fromNarrow : { kind: 'channel', channel: '', topic: '' });
            }
          }}
        >
          {t.kind === 'channel' ? 'New direct message' : 'Message a channel'}
        </button>
      </div>
      <TypingNotice />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {preview ? (
        <div class="compose-preview" role="region" aria-label="Preview" aria-busy={preview === 'loading'} tabIndex={0}>
          {preview === 'loading' ? (
            <p class="status">Rendering…</p>
          ) : preview.html.trim() ? (
            <div class="content" dangerouslySetInnerHTML={{ __html: withEmojiGlyphs(preview.html) }} />
          ) : (
            <p class="status">Nothing to preview.</p>
          )}
        </div>
      ) : (
        <ComposeText
          field={field}
          placeholder={t.kind === 'dm' ? 'Message these people' : 'Message'}
          onKeyDown={onKeyDown}
          onTyped={onTyped}
          onPasteFiles={(files) => void upload(files)}
        />
      )}
      <div class="compose-buttons">
        <input
          ref={fileInput}
          type="file"
          multiple
          class="visually-hidden"
          tabIndex={-1}
          aria-hidden="true"
          onChange={(e) => {
            const files = [...(e.currentTarget.files ?? [])];
            e.currentTarget.value = '';
            if (files.length) void upload(files);
          }}
        />
        <button type="button" onClick={() => fileInput.current?.click()}>
          Attach files
        </button>
        <button type="button" aria-pressed={preview !== null} onClick={() => void togglePreview()}>
          Preview
        </button>
        <button type="submit" disabled={sending || uploading || !text.trim() || (t.kind === 'dm' && t.to.length === 0)}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
      {me.value && realm.value.maxFileUploadMib !== null && (
        <p class="visually-hidden">Files up to {realm.value.maxFileUploadMib} MiB can be attached.</p>
      )}
    </form>
  );
}
