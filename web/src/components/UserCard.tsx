import { dmNarrow } from '../lib/narrow';
import { ago, timeOf } from '../lib/time';
import { hashOf } from '../state/navigation';
import { me, presence, users } from '../state/store';
import { Avatar } from './Avatar';
import { Dialog } from './Dialog';
import { presenceOf } from './PresenceDot';

/** Zulip's role numbers. */
const ROLES: Record<number, string> = { 100: 'Owner', 200: 'Administrator', 300: 'Moderator', 400: 'Member', 600: 'Guest' };

/** When they were last here, as Zulip words it: active now, idle, or last seen some time ago. */
function seenText(userId: number): string {
  const state = presenceOf(userId);
  if (state === 'active') return 'Active now';
  if (state === 'idle') return 'Idle';
  const p = presence.value.get(userId);
  const last = p ? Math.max(p.active, p.idle) : 0;
  return last ? `Last seen ${ago(last)}` : 'Not seen recently';
}

/** A person's card: who they are, when they were here, their local time, and ways to reach them. */
export function UserCard({ userId, onClose }: { userId: number; onClose: () => void }) {
  const u = users.value.get(userId);
  if (!u) {
    return (
      <Dialog label="Unknown user" onClose={onClose}>
        <p>This user is not known here.</p>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </Dialog>
    );
  }
  const email = u.delivery_email ?? u.email;
  const isMe = userId === me.value?.user_id;
  let localTime: string | null = null;
  if (u.timezone) {
    try {
      localTime = timeOf(Date.now() / 1000, u.timezone);
    } catch {
      localTime = null;
    }
  }
  return (
    <Dialog label={`About ${u.full_name}`} class="user-card" onClose={onClose}>
      <div class="card-head">
        <Avatar userId={u.user_id} size={64} />
        <div>
          <h2>{u.full_name}</h2>
          <p class="soft">{u.is_bot ? 'Bot' : (ROLES[u.role] ?? 'Member')}</p>
          {!u.is_active && <p class="soft">Deactivated</p>}
        </div>
      </div>
      <dl>
        <dt>Email</dt>
        <dd>{email}</dd>
        {!u.is_bot && (
          <>
            <dt>Presence</dt>
            <dd>{seenText(u.user_id)}</dd>
          </>
        )}
        {localTime && (
          <>
            <dt>Local time</dt>
            <dd>
              {localTime} <span class="soft">({u.timezone})</span>
            </dd>
          </>
        )}
      </dl>
      <nav class="card-links" aria-label={`Links for ${u.full_name}`}>
        <a href={hashOf(dmNarrow([u.user_id]))} onClick={onClose}>
          {isMe ? 'View notes to self' : 'Send direct message'}
        </a>
        <a href={hashOf([{ operator: 'sender', operand: u.user_id }])} onClick={onClose}>
          View messages sent
        </a>
      </nav>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </Dialog>
  );
}
