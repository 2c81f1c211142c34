import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiFailure, ok } from '../api/client';
import { COMMON_EMOJI, emojiGlyph } from '../lib/emoji';
import { replyTo } from '../state/compose';
import { me, type Message } from '../state/store';
import { MoveDialog } from './MoveDialog';
import { toggleReaction } from './Reactions';

/**
 * The menu of one message: react, reply, star, mark unread, edit, delete. A dialog, so
 * the keyboard reaches every action and Escape closes it.
 */
export function MessageActions({
  message: m,
  flags,
  startEditing = false,
  onClose,
}: {
  message: Message;
  flags: ReadonlySet<string>;
  startEditing?: boolean;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const mine = m.sender_id === me.value?.user_id;
  const [editing, setEditing] = useState(startEditing && mine);
  const [moving, setMoving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  async function act(run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
      onClose();
    } catch (e) {
      setError(e instanceof ApiFailure ? e.message : String(e));
    }
  }

  if (moving && m.type === 'stream' && m.stream_id !== undefined) {
    return <MoveDialog messageId={m.id} channelId={m.stream_id} topic={m.subject} defaultMode="change_one" onClose={onClose} />;
  }

  return (
    <dialog ref={dialog} class="menu" aria-label="Message actions" onClose={onClose}>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {editing ? (
        <EditForm message={m} onDone={onClose} onError={setError} />
      ) : (
        <>
          <div class="emoji-row" role="group" aria-label="React">
            {COMMON_EMOJI.map((e) => (
              <button
                type="button"
                key={e.name}
                aria-label={`React with ${e.name}`}
                onClick={() => void act(() => toggleReaction(m.id, e.name, false))}
              >
                {emojiGlyph(e.code, 'unicode_emoji', e.name)}
              </button>
            ))}
          </div>
          <button
            type="button"
            onClick={() => {
              onClose();
              replyTo(m);
            }}
          >
            Reply
          </button>
          <button
            type="button"
            onClick={() =>
              void act(() =>
                ok(
                  api.POST('/messages/flags', { body: { messages: [m.id], op: flags.has('starred') ? 'remove' : 'add', flag: 'starred' } }),
                ),
              )
            }
          >
            {flags.has('starred') ? 'Unstar' : 'Star'}
          </button>
          <button
            type="button"
            onClick={() => void act(() => ok(api.POST('/messages/flags', { body: { messages: [m.id], op: 'remove', flag: 'read' } })))}
          >
            Mark as unread
          </button>
          {mine && (
            <button type="button" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
          {m.type === 'stream' && (
            <button type="button" onClick={() => setMoving(true)}>
              Move message…
            </button>
          )}
          {mine && (
            <button
              type="button"
              class="danger"
              onClick={() => void act(() => ok(api.DELETE('/messages/{message_id}', { params: { path: { message_id: m.id } } })))}
            >
              Delete
            </button>
          )}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </>
      )}
    </dialog>
  );
}

function EditForm({ message: m, onDone, onError }: { message: Message; onDone: () => void; onError: (e: string) => void }) {
  const [text, setText] = useState<string | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const loaded = text !== null;
  // The text is editable once its source has come: the cursor goes there then.
  useEffect(() => {
    if (loaded) area.current?.focus();
  }, [loaded]);
  useEffect(() => {
    // The Markdown source, which the list does not hold (it has the HTML).
    ok(api.GET('/messages/{message_id}', { params: { path: { message_id: m.id }, query: { apply_markdown: false } } }))
      .then((r) => setText(r.message.content))
      .catch((e: unknown) => onError(String(e)));
  }, [m.id]);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        ok(
          api.PATCH('/messages/{message_id}', {
            params: { path: { message_id: m.id } },
            body: {
              content: text ?? '',
              propagate_mode: 'change_one',
              send_notification_to_old_thread: false,
              send_notification_to_new_thread: true,
            },
          }),
        )
          .then(onDone)
          .catch((err: unknown) => onError(err instanceof Error ? err.message : String(err)));
      }}
    >
      <label for="edit-content">Edit message</label>
      <textarea
        id="edit-content"
        ref={area}
        value={text ?? ''}
        disabled={text === null}
        onInput={(e) => setText(e.currentTarget.value)}
        rows={5}
      />
      <button type="submit">Save</button>
      <button type="button" onClick={onDone}>
        Cancel
      </button>
    </form>
  );
}
