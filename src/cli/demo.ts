import { createChannelInTx } from '../actions/channels';
import { doCreateRealm } from '../actions/realms';
import { sendMessageInTx, SendOptions } from '../actions/messages';
import { loadCaller } from '../access/viewer';
import { getChannelById } from '../queries/channels';
import { createUserInTx } from '../actions/users';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { Role } from '../domain/roles';
import type { UserRow } from '../queries/rows';
import { getRealmById, listRealms, updateRealm } from '../queries/realms';
import { getFirstActiveOwner, getUserById } from '../queries/users';

export const DEMO_PASSWORD = 'parley-demo-password';
/** The demo organization is the root organization, at EXTERNAL_URL itself. */
const DEMO_STRING_ID = '';

const PEOPLE = [
  { key: 'owner', email: 'olivia@example.com', name: 'Olivia Owner', role: Role.OWNER },
  { key: 'admin', email: 'adam@example.com', name: 'Adam Admin', role: Role.ADMINISTRATOR },
  { key: 'moderator', email: 'mona@example.com', name: 'Mona Moderator', role: Role.MODERATOR },
  { key: 'member', email: 'max@example.com', name: 'Max Member', role: Role.MEMBER },
  { key: 'member2', email: 'mia@example.com', name: 'Mia Member', role: Role.MEMBER },
  { key: 'guest', email: 'gus@example.com', name: 'Gus Guest', role: Role.GUEST },
] as const;
type Who = (typeof PEOPLE)[number]['key'];

/**
 * On an empty database, creates the demo organization: an owner (who may
 * create users), an administrator, a moderator, two members and a guest,
 * public and private channels (shared and protected history), and a few
 * conversations. Otherwise finds the first organization's owner. Either
 * way says which organization that is (its subdomain), for its URL.
 */
export async function ensureDemoOrganization(
  ctx: AppContext,
): Promise<{ created: boolean; owner: UserRow | undefined; realmStringId: string }> {
  const realms = await listRealms(ctx.db);
  if (realms.length > 0) {
    return { created: false, owner: await getFirstActiveOwner(ctx.db, realms[0]!.id), realmStringId: realms[0]!.string_id };
  }
  const owner = await seedDemo(ctx);
  return { created: true, owner, realmStringId: DEMO_STRING_ID };
}

async function seedDemo(ctx: AppContext): Promise<UserRow> {
  const realmId = await doCreateRealm(ctx.db, {
    stringId: DEMO_STRING_ID,
    name: 'Parley Demo',
    description: 'A demo organization for trying **Parley**.',
  });
  return inTransaction(ctx.db, async (tx) => {
    const u = {} as Record<Who, UserRow>;
    for (const p of PEOPLE) {
      u[p.key] = await createUserInTx(tx, null, {
        realmId,
        email: p.email,
        fullName: p.name,
        role: p.role,
        password: DEMO_PASSWORD,
        canCreateUsers: p.role === Role.OWNER,
        timezone: 'UTC',
      });
    }
    const staff = [u.owner, u.admin, u.moderator];
    const everyone = [...staff, u.member, u.member2];
    const channel = async (
      name: string,
      description: string,
      members: UserRow[],
      opts: { inviteOnly?: boolean; shared?: boolean; isDefault?: boolean } = {},
    ) => {
      const id = await createChannelInTx(tx, u.owner, {
        name,
        description,
        inviteOnly: opts.inviteOnly,
        historyPublicToSubscribers: opts.shared,
        isDefault: opts.isDefault,
        subscriberIds: members.map((m) => m.id),
      });
      return { id };
    };
    const general = await channel('general', 'Everyone is here.', [...everyone, u.guest], { isDefault: true });
    const random = await channel('random', 'Anything goes.', everyone, { isDefault: true });
    const engineering = await channel('engineering', 'Building **Parley**.', [u.admin, u.member, u.member2]);
    const leadership = await channel('leadership', 'Private, shared history.', staff, { inviteOnly: true, shared: true });
    const hr = await channel('hr', 'Private, protected history.', [u.owner, u.admin], { inviteOnly: true, shared: false });
    // New channels are announced in #general, as Zulip's new-organization default does.
    await updateRealm(tx.trx, realmId, { new_stream_announcements_stream_id: general.id });
    // Message reports go to the staff's private channel, so reporting works in the demo.
    await updateRealm(tx.trx, realmId, { moderation_request_channel_id: leadership.id });
    const realm = (await getRealmById(tx.trx, realmId))!;

    // Messages go through the same path as POST /messages (rendering, mentions, flags).
    const opts: SendOptions = { client: 'website', readBySender: true };
    const say = async (who: UserRow, ch: { id: number }, topic: string, text: string) => {
      const channel = (await getChannelById(tx.trx, realmId, ch.id))!;
      await sendMessageInTx(tx, null, await loadCaller(tx.trx, who, realm), { kind: 'channel', channel, topic }, text, opts);
    };
    const dm = async (who: UserRow, to: UserRow[], text: string) =>
      sendMessageInTx(tx, null, await loadCaller(tx.trx, who, realm), { kind: 'direct', recipients: to }, text, opts);
    await say(u.owner, general, 'welcome', 'Welcome to **Parley**, @**Max Member**! Say hello here.');
    await say(u.member, general, 'welcome', 'Hello everyone :wave:');
    await say(u.guest, general, 'welcome', 'Hi! Glad to be here as a guest.');
    await say(u.admin, general, 'announcements', 'The office is closed on Friday. @**all**');
    await say(u.member2, random, 'lunch', 'Anyone up for tacos? :taco:');
    await say(u.moderator, random, 'lunch', 'Count me in.');
    await say(u.admin, engineering, 'release 0.1', 'Release notes are in https://example.com/notes');
    await say(u.member, engineering, 'release 0.1', '```\nmake test\n```\npasses on both databases.');
    await say(u.owner, leadership, 'planning', 'Budget review next week.');
    await say(u.owner, hr, 'hiring', 'Two offers went out today.');
    await dm(u.member, [u.member2], 'Can you review my change?');
    await dm(u.member2, [u.member], 'Sure, after lunch.');
    await dm(u.owner, [u.admin, u.moderator], 'Quick sync at 3?');
    return (await getUserById(tx.trx, u.owner.id))!;
  });
}
