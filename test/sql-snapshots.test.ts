/**
 * The SQL of the hot reads, checked into test/sql/<query>.<dialect>.sql, so a
 * query's text never changes unreviewed (docs/adr/0037-typed-tables.md). Each
 * case calls the query functions themselves on a fresh migrated database and
 * records every statement knex sends (its `query` event), bindings left out:
 * a changed column list, join, index hint or statement count fails here until
 * the file is rewritten with UPDATE_SQL_SNAPSHOTS=1 and the diff reviewed.
 * Which reads are hot: bench/lib/scenarios.ts and POST /register's state.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { findUserByApiKey } from '../src/queries/auth';
import {
  countChannelSubscribers,
  listChannelFolders,
  listChannelSubscribers,
  listChannelSubscriptions,
  listRealmChannels,
  listCustomProfileFields,
  listGroupMemberships,
  listRealmEmoji,
  listRealmProfileValues,
  listRecentDmConversations,
  listStarredMessageIds,
  listSubgroupLinks,
  listUnreadRows,
} from '../src/queries/register';
import { fetchNarrowByIds, fetchNarrowRange, findFirstUnread, NarrowQuery } from '../src/queries/narrow';
import { getPresenceForReport, listRealmPresence } from '../src/queries/presence';
import { getOwnUserExtras, listRealmUsers } from '../src/queries/users';
import { getViewerMemberships, listRealmGroups } from '../src/queries/groups';
import { getRealmById } from '../src/queries/realms';
import { listChannelTopics } from '../src/queries/topics';
import { eachDatabase, freshDatabase, TestDb } from './support/databases';

const DIR = path.join(__dirname, 'sql');
const UPDATE = process.env.UPDATE_SQL_SNAPSHOTS === '1';

const REALM = 1;
const USER = 1;
const CHANNEL_RECIPIENT = 5;
const NEWEST = 10_000_000;

const personal = (filters: NarrowQuery['filters'], withMessages = true): NarrowQuery => ({
  viewerId: USER,
  historyRecipients: null,
  filters,
  withMessages,
});

/** The hot reads: a name (the snapshot's file) and the calls whose statements it holds. */
const CASES: Array<[string, (db: Knex) => Promise<unknown>]> = [
  // Every authenticated request.
  ['auth-api-key', (db) => findUserByApiKey(db, 'k'.repeat(32), 'zulip', true)],
  ['realm-by-id', (db) => getRealmById(db, REALM)],
  ['viewer-memberships', (db) => getViewerMemberships(db, USER, REALM)],
  // GET /users/me, GET /users.
  ['users-me-extras', (db) => getOwnUserExtras(db, { id: USER, realm_id: REALM })],
  ['users-list', (db) => listRealmUsers(db, REALM)],
  // POST /register's state.
  ['register-channels', (db) => listRealmChannels(db, REALM)],
  ['register-subscriptions', (db) => listChannelSubscriptions(db, USER)],
  ['register-subscribers', (db) => listChannelSubscribers(db, REALM)],
  ['register-subscriber-counts', (db) => countChannelSubscribers(db, REALM)],
  ['register-groups', (db) => listRealmGroups(db, REALM)],
  ['register-group-members', (db) => listGroupMemberships(db, REALM)],
  ['register-subgroups', (db) => listSubgroupLinks(db, REALM)],
  ['register-unread', (db) => listUnreadRows(db, USER, 50_000)],
  ['register-starred', (db) => listStarredMessageIds(db, USER, 50_000)],
  ['register-recent-dms', (db) => listRecentDmConversations(db, USER, 1000)],
  ['register-profile-fields', (db) => listCustomProfileFields(db, REALM)],
  ['register-profile-values', (db) => listRealmProfileValues(db, REALM)],
  ['register-emoji', (db) => listRealmEmoji(db, REALM)],
  ['register-channel-folders', (db) => listChannelFolders(db, REALM)],
  // Presence: a report, and the organization's list.
  ['presence-report', (db) => getPresenceForReport(db, REALM, USER)],
  ['presence-list', (db) => listRealmPresence(db, REALM, { afterUpdateId: 0, connectedSince: 0 })],
  // GET /messages: the page of bench/lib/scenarios.ts's reads.
  ['messages-newest', (db) => fetchNarrowRange(db, personal([]), '<=', NEWEST, 101)],
  [
    'messages-channel-topic',
    (db) =>
      fetchNarrowRange(
        db,
        {
          viewerId: USER,
          historyRecipients: [CHANNEL_RECIPIENT],
          filters: [
            { kind: 'recipient', ids: [CHANNEL_RECIPIENT], negated: false },
            { kind: 'topic', key: 'topic', negated: false },
          ],
          withMessages: true,
        },
        '<=',
        NEWEST,
        101,
      ),
  ],
  ['messages-starred', (db) => fetchNarrowRange(db, personal([{ kind: 'flag', column: 'is_starred', negated: false }]), '<=', NEWEST, 101)],
  ['messages-unread', (db) => fetchNarrowRange(db, personal([{ kind: 'flag', column: 'is_unread', negated: false }]), '<=', NEWEST, 101)],
  [
    'messages-search',
    (db) =>
      fetchNarrowRange(db, personal([{ kind: 'search', words: [{ prefix: 'word', terms: ['word'] }], negated: false }]), '<=', NEWEST, 101),
  ],
  ['messages-first-unread', (db) => findFirstUnread(db, personal([], false))],
  ['messages-by-ids', (db) => fetchNarrowByIds(db, personal([]), [1, 2, 3])],
  ['topics-list', (db) => listChannelTopics(db, CHANNEL_RECIPIENT, USER)],
];

/** The statements `work` sends, one per line (a pipelined packet's statements split, as test/support/server.ts counts them). */
async function statementsSent(db: Knex, work: () => Promise<unknown>): Promise<string> {
  const statements: string[] = [];
  const onQuery = (q: { sql: string }) => statements.push(...q.sql.split(';\n').map((s) => s.trim()));
  db.on('query', onQuery);
  try {
    await work();
  } finally {
    db.removeListener('query', onQuery);
  }
  return statements.map((s) => `${s};\n`).join('');
}

eachDatabase('SQL of the hot reads', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(async () => {
    await t?.drop();
  });

  it.each(CASES)('%s', async (name, work) => {
    const sql = await statementsSent(t.db, () => work(t.db));
    expect(sql).not.toBe('');
    const file = path.join(DIR, `${name}.${dialect}.sql`);
    if (UPDATE) {
      fs.mkdirSync(DIR, { recursive: true });
      fs.writeFileSync(file, sql);
      return;
    }
    if (!fs.existsSync(file))
      throw new Error(`${path.relative(process.cwd(), file)} is missing: run with UPDATE_SQL_SNAPSHOTS=1 and commit it`);
    const checkedIn = fs.readFileSync(file, 'utf8');
    if (sql !== checkedIn)
      throw new Error(
        `The SQL of ${name} on ${dialect} is not ${path.relative(process.cwd(), file)}'s. If the change is meant, ` +
          `rerun with UPDATE_SQL_SNAPSHOTS=1 and commit the file with the change.\n--- checked in\n${checkedIn}--- sent now\n${sql}`,
      );
  });

  it('has no snapshot file left over from a query no longer listed', () => {
    if (UPDATE) return;
    const listed = new Set(CASES.map(([name]) => `${name}.${dialect}.sql`));
    const stale = fs.readdirSync(DIR).filter((f) => f.endsWith(`.${dialect}.sql`) && !listed.has(f));
    expect(stale).toEqual([]);
  });
});
