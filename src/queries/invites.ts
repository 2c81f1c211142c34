import type { Knex } from 'knex';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

export interface InviteRow {
  id: number;
  realm_id: number;
  referred_by_id: number;
  link_key: string;
  invited_as: number;
  date_created: number;
  expires_at: number | null;
  include_realm_default_subscriptions: boolean;
  welcome_message_custom_text: string | null;
  revoked: boolean;
  max_uses: number | null;
  use_count: number;
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
