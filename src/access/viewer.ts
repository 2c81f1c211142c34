import type { Knex } from 'knex';
import { isAdminRole, isGuestRole } from '../domain/roles';
import type { ChannelRow } from '../queries/channels';
import { getViewerMemberships } from '../queries/groups';
import type { UserRow } from '../queries/rows';

/**
 * The acting user with what permission checks need, loaded once per request
 * (one query): every group they belong to, recursively, and the channels
 * they are subscribed to. Checks are then set lookups.
 */
export interface Viewer {
  user: UserRow;
  groups: ReadonlySet<number>;
  subscribedRecipients: ReadonlySet<number>;
}

/**
 * Memberships authentication found for the caller (from the caller cache,
 * src/cache/caller.ts); they live as long as the request's user object.
 * Taken once: a second loadViewer in the same request (after a change)
 * reads the database again.
 */
const prefetched = new WeakMap<object, Omit<Viewer, 'user'>>();
export function rememberMemberships(user: UserRow, memberships: Omit<Viewer, 'user'>): void {
  prefetched.set(user, memberships);
}

export async function loadViewer(db: Knex, user: UserRow): Promise<Viewer> {
  const known = prefetched.get(user);
  if (known) {
    prefetched.delete(user);
    return { user, ...known };
  }
  return { user, ...(await getViewerMemberships(db, user.id, user.realm_id)) };
}

export const inGroup = (v: Viewer, groupId: number | null | undefined) => groupId != null && v.groups.has(groupId);

/**
 * Whether the viewer may read the channel's history (messages they did not
 * receive): public channels for everyone but guests; otherwise subscribers,
 * and for private channels only with shared history.
 */
export function canReadChannelHistory(v: Viewer, c: ChannelRow): boolean {
  const subscribed = v.subscribedRecipients.has(c.recipient_id);
  if (!c.invite_only) return subscribed || !isGuestRole(v.user.role);
  return subscribed && c.history_public_to_subscribers;
}

/** Whether the viewer may know the channel exists (metadata access). */
export function canSeeChannel(
  v: Viewer,
  c: Pick<
    ChannelRow,
    'recipient_id' | 'invite_only' | 'can_administer_channel_group' | 'can_subscribe_group' | 'can_add_subscribers_group'
  >,
): boolean {
  if (v.subscribedRecipients.has(c.recipient_id)) return true;
  if (!c.invite_only) return !isGuestRole(v.user.role);
  return (
    isAdminRole(v.user.role) ||
    inGroup(v, c.can_administer_channel_group) ||
    inGroup(v, c.can_subscribe_group) ||
    inGroup(v, c.can_add_subscribers_group)
  );
}

/**
 * Whether the viewer may read the channel's messages at all (Zulip's
 * content access): subscribers; anyone but a guest for a public channel;
 * members of the groups that may subscribe themselves or others to a
 * private one. Administrators are not included: they may know a private
 * channel exists without reading it.
 */
export function canAccessChannelContent(
  v: Viewer,
  c: Pick<ChannelRow, 'recipient_id' | 'invite_only' | 'can_subscribe_group' | 'can_add_subscribers_group'>,
): boolean {
  if (v.subscribedRecipients.has(c.recipient_id)) return true;
  if (!c.invite_only) return !isGuestRole(v.user.role);
  return inGroup(v, c.can_subscribe_group) || inGroup(v, c.can_add_subscribers_group);
}

export const isAdminViewer = (v: Viewer) => isAdminRole(v.user.role);
