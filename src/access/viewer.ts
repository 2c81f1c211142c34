import type { Knex } from 'knex';
import { isAdminRole, isGuestRole } from '../domain/roles';
import type { ChannelRow } from '../queries/channels';
import { getViewerMemberships } from '../queries/groups';
import type { RealmRow, UserRow } from '../queries/rows';

/**
 * The acting user with what permission checks need: every group they belong
 * to, recursively, and the channels they are subscribed to. Checks are then
 * set lookups.
 */
export interface Viewer {
  user: UserRow;
  groups: ReadonlySet<number>;
  subscribedRecipients: ReadonlySet<number>;
}

/**
 * The authenticated caller of a request, built once by the pipeline from
 * what authentication read (the caller and organization caches, src/cache/)
 * and handed to the handler in its call (src/http/handler.ts): a viewer
 * whose memberships are those authentication saw, plus the organization row.
 * Nothing keeps it after the request. A user acting outside a request of
 * their own (a notification bot, the command line) gets one from loadCaller.
 */
export interface Caller extends Viewer {
  realm: RealmRow;
}

/**
 * A user's memberships read from the database now (one query): for a user
 * other than the request's caller (a bot sending a notification), or for the
 * caller after a change their Caller does not show.
 */
export async function loadViewer(db: Knex, user: UserRow): Promise<Viewer> {
  return { user, ...(await getViewerMemberships(db, user.id, user.realm_id)) };
}

/**
 * A user other than the request's caller acting with their organization's
 * row, which the code at hand already holds: their memberships read now (one
 * query), as loadViewer.
 */
export async function loadCaller(db: Knex, user: UserRow, realm: RealmRow): Promise<Caller> {
  return { ...(await loadViewer(db, user)), realm };
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
