import { inTransaction } from '../../../src/db/transaction';
import { addGroupMembers, getSystemGroupIds, insertGroup } from '../../../src/queries/groups';
import type { UserRow } from '../../../src/queries/rows';
import type { CastName, TestServer } from '../server';

/** Who a fuzzed request authenticates as (the deactivated account is a mutation of its own). */
export const CALLERS = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const;
export type Caller = (typeof CALLERS)[number];

/** The existing objects a base request refers to, so that its only defect is the mutation. */
export interface World {
  users: Record<CastName, UserRow>;
  /** The active accounts' ids. */
  userIds: number[];
  /** Every account's address, the deactivated one's too. */
  emails: string[];
  channelIds: number[];
  channelNames: string[];
  messageIds: number[];
  groupIds: number[];
  inviteKey: string;
  queueId: string;
  /** Larger than every id of every table (and still an integer in every engine). */
  missingId: number;
}

/**
 * Populates the cast's realm through the API (valid requests, contract-checked):
 * channels public and private, channel and direct messages, a reaction, a named
 * group, an invitation link and an event queue.
 */
export async function buildWorld(t: TestServer): Promise<World> {
  const { owner, admin, moderator, member, guest, bot } = t.cast;
  const ok = async (p: Promise<{ status: number; body: Record<string, any> }>) => {
    const res = await p;
    if (res.status !== 200) throw new Error(`fuzz world: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const channels: Array<[string, boolean, UserRow[]]> = [
    ['general', false, [owner, admin, moderator, member, guest, bot]],
    ['design', false, [owner, member]],
    ['secret', true, [owner, admin]],
  ];
  const channelIds: number[] = [];
  for (const [name, inviteOnly, subs] of channels) {
    const body = await ok(t.api.post('/channels/create', owner, { name, subscribers: subs.map((u) => u.id), invite_only: inviteOnly }));
    channelIds.push(body.id as number);
  }
  const messageIds: number[] = [];
  const sends: Array<[UserRow, Record<string, unknown>]> = [
    [member, { type: 'channel', to: 'general', topic: 'greetings', content: 'hello @**Test Admin**' }],
    [owner, { type: 'channel', to: 'secret', topic: 'plans', content: 'hush' }],
    [admin, { type: 'direct', to: [member.id], content: 'a word' }],
    [guest, { type: 'channel', to: 'general', topic: 'greetings', content: 'hi all' }],
  ];
  for (const [who, fields] of sends) messageIds.push((await ok(t.api.post('/messages', who, fields))).id as number);
  await ok(t.api.post(`/messages/${messageIds[0]}/reactions`, admin, { emoji_name: 'smile' }));
  const invite = await ok(t.api.post('/invites/multiuse', owner, { stream_ids: [channelIds[0]], invite_expires_in_minutes: 60 * 24 }));
  const inviteKey = String(invite.invite_link).replace(/\/$/, '').split('/').pop()!;
  const queue = await ok(t.api.post('/register', member, { event_types: ['message'] }));

  const system = await getSystemGroupIds(t.ctx.db, t.realmId);
  const named = await inTransaction(t.ctx.db, async ({ trx }) => {
    const nobody = system.get('role:nobody')!;
    const everyone = system.get('role:everyone')!;
    const id = await insertGroup(trx, {
      realm_id: t.realmId,
      is_system_group: false,
      creator_id: owner.id,
      date_created: 1700000000,
      name: 'support',
      description: 'Helpers',
      can_add_members_group: nobody,
      can_join_group: nobody,
      can_leave_group: everyone,
      can_manage_group: nobody,
      can_mention_group: everyone,
      can_remove_members_group: nobody,
    });
    await addGroupMembers(trx, id, [member.id, moderator.id]);
    return id;
  });

  const users = t.cast;
  return {
    users,
    // Active accounts: the deactivated one is named only where a mutation wants it.
    userIds: Object.values(users)
      .filter((u) => u.is_active)
      .map((u) => u.id),
    emails: Object.values(users).map((u) => u.email),
    channelIds,
    channelNames: channels.map((c) => c[0]),
    messageIds,
    groupIds: [...system.values(), named],
    inviteKey,
    queueId: String(queue.queue_id),
    missingId: 999_999_999,
  };
}
