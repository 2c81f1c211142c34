import { api, ok } from '../api/client';
import { me, userName, type Message } from '../state/store';
import { emojiGlyph } from '../lib/emoji';

/** A message's reactions, one button per emoji with its count; pressing one adds or takes back the user's. */
export function Reactions({ message }: { message: Message }) {
  if (message.reactions.length === 0) return null;
  const myId = me.value?.user_id ?? 0;
  const groups = new Map<string, { name: string; code: string; type: ReactionType; users: number[] }>();
  for (const r of message.reactions) {
    const key = `${r.reaction_type}:${r.emoji_code}`;
    const g = groups.get(key) ?? { name: r.emoji_name, code: r.emoji_code, type: r.reaction_type, users: [] };
    g.users.push(r.user_id);
    groups.set(key, g);
  }
  return (
    <div class="reactions">
      {[...groups.values()].map((g) => {
        const mine = g.users.includes(myId);
        return (
          <button
            type="button"
            key={`${g.type}:${g.code}`}
            class={`reaction ${mine ? 'mine' : ''}`}
            aria-pressed={mine}
            title={`${g.users.map(userName).join(', ')} reacted with :${g.name}:`}
            onClick={() => void toggleReaction(message.id, g.name, mine, g.type)}
          >
            <span aria-hidden="true">{emojiGlyph(g.code, g.type, g.name)}</span> {g.users.length}
          </button>
        );
      })}
    </div>
  );
}

export type ReactionType = Message['reactions'][number]['reaction_type'];

/** Adds or removes the user's reaction, named by its emoji's name and kind (Unicode, custom, …). */
export async function toggleReaction(
  messageId: number,
  emojiName: string,
  remove: boolean,
  type: ReactionType = 'unicode_emoji',
): Promise<void> {
  const params = { path: { message_id: messageId } };
  const body = { emoji_name: emojiName, reaction_type: type };
  if (remove) await ok(api.DELETE('/messages/{message_id}/reactions', { params, body }));
  else await ok(api.POST('/messages/{message_id}/reactions', { params, body }));
}
