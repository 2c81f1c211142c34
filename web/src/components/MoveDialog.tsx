import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { realm, subscriptions } from '../state/store';
import { moveMessages, type PropagateMode } from '../state/topics';
import { Dialog } from './Dialog';

/**
 * Moving messages: to another channel, another topic name, or both; the
 * message alone, it and those after it in its topic, or the whole topic.
 */
export function MoveDialog({
  messageId,
  channelId,
  topic,
  defaultMode,
  unknown = false,
  onClose,
}: {
  messageId: number;
  channelId: number;
  topic: string;
  defaultMode: PropagateMode;
  unknown?: boolean;
  onClose: () => void;
}) {
  const [toChannel, setToChannel] = useState(channelId);
  const [toTopic, setToTopic] = useState(topic);
  const [mode, setMode] = useState<PropagateMode>(defaultMode);
  const [notifyOld, setNotifyOld] = useState(true);
  const [notifyNew, setNotifyNew] = useState(true);
  const [error, setError] = useState<string | null>(unknown ? 'No message of this topic is loaded; open the topic first.' : null);
  const [busy, setBusy] = useState(false);

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    if (unknown) return;
    setBusy(true);
    setError(null);
    try {
      await moveMessages(
        messageId,
        {
          channelId: toChannel !== channelId ? toChannel : undefined,
          topic: toTopic !== topic ? toTopic : undefined,
        },
        mode,
        { old: notifyOld, new: notifyNew },
      );
      onClose();
    } catch (err) {
      setError(err instanceof ApiFailure || err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog label="Move messages" class="form-dialog" onClose={onClose}>
      <form onSubmit={(e) => void submit(e)}>
        <h2>Move messages</h2>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <label>
          Channel
          <select value={toChannel} onChange={(e) => setToChannel(Number(e.currentTarget.value))}>
            {subscriptions.value.map((s) => (
              <option key={s.stream_id} value={s.stream_id}>
                #{s.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Topic
          <input value={toTopic} maxLength={realm.value.maxTopicLength} onInput={(e) => setToTopic(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Which messages</legend>
          {(
            [
              ['change_one', 'This message only'],
              ['change_later', 'This message and the ones after it'],
              ['change_all', 'The whole topic'],
            ] as const
          ).map(([value, text]) => (
            <label key={value} class="choice">
              <input type="radio" name="propagate_mode" value={value} checked={mode === value} onChange={() => setMode(value)} />
              {text}
            </label>
          ))}
        </fieldset>
        <label class="choice">
          <input type="checkbox" checked={notifyOld} onChange={(e) => setNotifyOld(e.currentTarget.checked)} />
          Send a notice to the old topic
        </label>
        <label class="choice">
          <input type="checkbox" checked={notifyNew} onChange={(e) => setNotifyNew(e.currentTarget.checked)} />
          Send a notice to the new topic
        </label>
        <div class="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" disabled={busy || unknown || (toChannel === channelId && toTopic === topic)}>
            Move
          </button>
        </div>
      </form>
    </Dialog>
  );
}
