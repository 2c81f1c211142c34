import type { Knex } from 'knex';
import type { RoleCode } from '../domain/roles';
import { insertOne, insertRows } from './ids';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

export interface InviteRow {
  id: number;
  realm_id: number;
  referred_by_id: number;
  link_key: string;
  invited_as: RoleCode;
  date_created: number;
  expires_at: number | null;
  include_realm_default_subscriptions: boolean;
  welcome_message_custom_text: string | null;
  revoked: boolean;
  max_uses: number | null;
  use_count: number;
}

/** A new link's columns (revoked, max_uses and use_count keep the table's defaults). */
export type NewInviteRow = Omit<InviteRow, 'id' | 'revoked' | 'max_uses' | 'use_count'>;

export async function insertInvite(q: Q, row: NewInviteRow): Promise<number> {
  return insertOne(q, 'multiuse_invites', row);
}

/** The channels and groups a link's new users join. */
export async function insertInviteTargets(q: Q, inviteId: number, channelIds: number[], groupIds: number[]): Promise<void> {
  await insertRows(
    q,
    'multiuse_invite_channels',
    channelIds.map((channel_id) => ({ invite_id: inviteId, channel_id })),
  );
  await insertRows(
    q,
    'multiuse_invite_groups',
    groupIds.map((group_id) => ({ invite_id: inviteId, group_id })),
  );
}

/** Counts one more account made with the link. */
export async function addInviteUse(q: Q, inviteId: number): Promise<void> {
  await q('multiuse_invites').where({ id: inviteId }).increment('use_count', 1);
}

/** The organization's active default channels (a link with include_realm_default_subscriptions adds them). */
export async function listRealmDefaultChannelIds(q: Q, realmId: number): Promise<number[]> {
  return q('channels').where({ realm_id: realmId, is_default: true, deactivated: false }).pluck('id');
}

export async function getInviteByKey(q: Q, key: string): Promise<InviteRow | undefined> {
  const row = await q('multiuse_invites').where({ link_key: key }).first();
  return row ? mapBools<InviteRow>(row) : undefined;
}

export async function getInviteChannelIds(q: Q, inviteId: number): Promise<number[]> {
  return q('multiuse_invite_channels').where({ invite_id: inviteId }).pluck('channel_id');
}

export async function getInviteGroupIds(q: Q, inviteId: number): Promise<number[]> {
  return q('multiuse_invite_groups').where({ invite_id: inviteId }).pluck('group_id');
}

/** The organization's reusable links that are not revoked (the caller filters on expiry and uses), oldest first. */
export async function listUnrevokedInviteLinks(q: Q, realmId: number, referredById: number | null): Promise<InviteRow[]> {
  const query = q('multiuse_invites').where({ realm_id: realmId, revoked: false }).orderBy('id');
  if (referredById !== null) void query.where({ referred_by_id: referredById });
  return ((await query) as Record<string, unknown>[]).map((r) => mapBools<InviteRow>(r));
}

export async function getInviteLinkById(q: Q, id: number): Promise<InviteRow | undefined> {
  const row = await q('multiuse_invites').where({ id }).first();
  return row ? mapBools<InviteRow>(row) : undefined;
}

export async function revokeInviteLink(q: Q, id: number): Promise<void> {
  await q('multiuse_invites').where({ id }).update({ revoked: true });
}
