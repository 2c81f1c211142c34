import type { Knex } from 'knex';
import type { RoleCode } from '../domain/roles';
import { insertOne, insertRows } from './ids';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

/** Zulip's confirmation statuses for an invitation (confirmation/settings.py). */
export const InviteStatus = { ACTIVE: 0, USED: 1, REVOKED: 2 } as const;

export interface EmailInviteRow {
  id: number;
  realm_id: number;
  referred_by_id: number;
  email: string;
  invited_as: RoleCode;
  invited_at: number;
  expires_at: number | null;
  status: number;
  notify_referrer_on_join: boolean;
  include_realm_default_subscriptions: boolean;
  welcome_message_custom_text: string | null;
  confirmation_key: string;
  created_user_id: number | null;
  /** The reusable link whose page this row confirms an address for (not an invitation of its own). */
  multiuse_invite_id: number | null;
}

export type NewEmailInviteRow = Omit<EmailInviteRow, 'id' | 'status' | 'created_user_id'>;

const BOOLS = (row: Record<string, unknown>) => mapBools<EmailInviteRow>(row);

export async function insertEmailInvite(q: Q, row: NewEmailInviteRow, channelIds: number[], groupIds: number[]): Promise<number> {
  const id = await insertOne(q, 'email_invites', row);
  await insertRows(
    q,
    'email_invite_channels',
    channelIds.map((channel_id) => ({ invite_id: id, channel_id })),
  );
  await insertRows(
    q,
    'email_invite_groups',
    groupIds.map((group_id) => ({ invite_id: id, group_id })),
  );
  return id;
}

export async function getEmailInviteById(q: Q, id: number): Promise<EmailInviteRow | undefined> {
  const row = await q('email_invites').where({ id }).first();
  return row ? BOOLS(row) : undefined;
}

export async function getEmailInviteByKey(q: Q, key: string): Promise<EmailInviteRow | undefined> {
  const row = await q('email_invites').where({ confirmation_key: key }).first();
  return row ? BOOLS(row) : undefined;
}

/** Usable email invitations of an organization (or of one sender), oldest first: not used, not revoked, not expired. */
export async function listUsableEmailInvites(q: Q, realmId: number, referredById: number | null, now: number): Promise<EmailInviteRow[]> {
  const query = q('email_invites')
    .where({ realm_id: realmId, status: InviteStatus.ACTIVE })
    .whereNull('multiuse_invite_id')
    .andWhere((w) => void w.whereNull('expires_at').orWhere('expires_at', '>', now))
    .orderBy('id');
  if (referredById !== null) void query.where({ referred_by_id: referredById });
  return ((await query) as Record<string, unknown>[]).map(BOOLS);
}

/**
 * Takes a usable invitation for the account being made: true when this
 * transaction changed it from usable to used. A concurrent sign-up, or a
 * revocation, that got there first leaves it alone (false).
 */
export async function claimEmailInvite(q: Q, id: number): Promise<boolean> {
  return (await q('email_invites').where({ id, status: InviteStatus.ACTIVE }).update({ status: InviteStatus.USED })) === 1;
}

export async function setEmailInviteStatus(q: Q, id: number, status: number, createdUserId: number | null = null): Promise<void> {
  await q('email_invites').where({ id }).update({ status, created_user_id: createdUserId });
}

/**
 * When someone joins, the organization's other usable invitations to the
 * same address are revoked (Zulip's revoke_preregistration_users): they
 * could only fail now. Returns who had sent them.
 */
export async function revokeOtherEmailInvites(q: Q, realmId: number, emailKey: string, keepId: number | null): Promise<number[]> {
  const rows: Array<{ id: number; email: string; referred_by_id: number }> = await q('email_invites')
    .where({ realm_id: realmId, status: InviteStatus.ACTIVE })
    .select('id', 'email', 'referred_by_id');
  const matching = rows.filter((r) => r.email.toLowerCase() === emailKey && Number(r.id) !== keepId);
  if (matching.length) {
    await q('email_invites')
      .whereIn(
        'id',
        matching.map((r) => r.id),
      )
      .update({ status: InviteStatus.REVOKED });
  }
  return matching.map((r) => Number(r.referred_by_id));
}

export async function getEmailInviteChannelIds(q: Q, inviteId: number): Promise<number[]> {
  return (await q('email_invite_channels').where({ invite_id: inviteId }).pluck('channel_id')).map(Number);
}

export async function getEmailInviteGroupIds(q: Q, inviteId: number): Promise<number[]> {
  return (await q('email_invite_groups').where({ invite_id: inviteId }).pluck('group_id')).map(Number);
}

/** Counts `count` invitation mails sent now (first sends and resends alike). */
export async function recordInvitationsSent(q: Q, realmId: number, count: number, now: number): Promise<void> {
  await q('invitations_sent').insert({ realm_id: realmId, sent_at: now, count });
}

/** Invitation mails the given organizations sent since `since` (Zulip's estimate_recent_invites). */
export async function countInvitationsSent(q: Q, realmIds: number[], since: number): Promise<number> {
  if (realmIds.length === 0) return 0;
  const row = await q('invitations_sent').whereIn('realm_id', realmIds).where('sent_at', '>', since).sum({ total: 'count' }).first();
  return Number((row as { total?: unknown } | undefined)?.total ?? 0);
}

/** Organizations created since `since` whose own limit is the default one (Zulip's "new realms" of check_invite_limit). */
export async function listNewRealmIdsWithDefaultLimit(q: Q, since: number, defaultMax: number): Promise<number[]> {
  const ids: Array<number | string> = await q('realms')
    .where('date_created', '>=', since)
    .andWhere((w) => void w.whereNull('max_invites').orWhere('max_invites', '<=', defaultMax))
    .pluck('id');
  return ids.map(Number);
}

/**
 * A deactivated user's usable invitations, by email and links, are revoked
 * (Zulip's revoke_invites_generated_by_user): nobody joins on the word of an
 * account that is gone. Returns whether any was.
 */
export async function revokeInvitationsBy(q: Q, userId: number, now: number): Promise<{ revoked: boolean; emails: string[] }> {
  const usable = () =>
    q('email_invites')
      .where({ referred_by_id: userId, status: InviteStatus.ACTIVE })
      .andWhere((w) => void w.whereNull('expires_at').orWhere('expires_at', '>', now));
  const emails = (await usable().pluck('email')) as string[];
  const revokedEmails = emails.length > 0 ? await usable().update({ status: InviteStatus.REVOKED }) : 0;
  const links = await q('multiuse_invites')
    .where({ referred_by_id: userId, revoked: false })
    .andWhere((w) => void w.whereNull('expires_at').orWhere('expires_at', '>', now))
    .update({ revoked: true });
  return { revoked: Number(revokedEmails) + Number(links) > 0, emails };
}
