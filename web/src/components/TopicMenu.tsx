import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { channelNarrow } from '../lib/narrow';
import { channelName, topicKey, topicPolicies, VISIBILITY } from '../state/store';
import { flagNarrow, isResolved, newestKnownId, resolveTopic, setTopicPolicy } from '../state/topics';
import { removeUnread, unreadIdsIn } from '../state/unread';
import { Dialog } from './Dialog';
import { MoveDialog } from './MoveDialog';

/**
 * A topic's menu, from its recipient line or the sidebar: mute, unmute or
 * follow it; mark it read; resolve it; move it to another channel or name.
 */
export function TopicMenu({ channelId, topic, onClose }: { channelId: number; topic: string; onClose: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [moving, setMoving] = useState(false);
  const policy = topicPolicies.value.get(topicKey(channelId, topic)) ?? VISIBILITY.INHERIT;
  const resolved = isResolved(topic);

  async function act(run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
      onClose();
    } catch (e) {
      setError(e instanceof ApiFailure || e instanceof Error ? e.message : String(e));
    }
  }

  if (moving) {
    const id = newestKnownId(channelId, topic);
    return (
      <MoveDialog
        messageId={id ?? 0}
        channelId={channelId}
        topic={topic}
        defaultMode="change_all"
        onClose={onClose}
        unknown={id === null}
      />
    );
  }

  const name = topic || 'general chat';
  return (
    <Dialog label={`Topic ${name} in #${channelName(channelId)}`} onClose={onClose}>
      <p class="menu-title">
        #{channelName(channelId)} › {name}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {policy !== VISIBILITY.MUTED && (
        <button type="button" onClick={() => void act(() => setTopicPolicy(channelId, topic, VISIBILITY.MUTED))}>
          Mute topic
        </button>
      )}
      {policy !== VISIBILITY.INHERIT && (
        <button type="button" onClick={() => void act(() => setTopicPolicy(channelId, topic, VISIBILITY.INHERIT))}>
          {policy === VISIBILITY.MUTED ? 'Unmute topic' : policy === VISIBILITY.FOLLOWED ? 'Unfollow topic' : 'Back to the channel default'}
        </button>
      )}
      {policy !== VISIBILITY.FOLLOWED && (
        <button type="button" onClick={() => void act(() => setTopicPolicy(channelId, topic, VISIBILITY.FOLLOWED))}>
          Follow topic
        </button>
      )}
      <button
        type="button"
        onClick={() =>
          void act(async () => {
            removeUnread(unreadIdsIn(channelId, topic));
            await flagNarrow(channelNarrow(channelId, topic), 'read');
          })
        }
      >
        Mark as read
      </button>
      <button type="button" onClick={() => void act(() => resolveTopic(channelId, topic, !resolved))}>
        {resolved ? 'Mark as unresolved' : 'Mark as resolved'}
      </button>
      <button type="button" onClick={() => setMoving(true)}>
        Move topic…
      </button>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </Dialog>
  );
}
