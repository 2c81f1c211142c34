import type { Express } from 'express';
import request from 'supertest';
import { buildApp } from '../../src/app';
import { doCreateRealm } from '../../src/actions/realms';
import { createUserInTx, doDeactivateUser } from '../../src/actions/users';
import { AppContext, createContext } from '../../src/context';
import type { Dialect } from '../../src/db/connection';
import { inTransaction } from '../../src/db/transaction';
import type { Clock } from '../../src/events/clock';
import type { EventBus } from '../../src/events/bus';
import { Role } from '../../src/domain/roles';
import path from 'node:path';
import { loadSpecFile, SpecIndex } from '../../src/http/spec';
import type { UserRow } from '../../src/queries/rows';
import { getUserById, updateUser } from '../../src/queries/users';
import { hashPassword } from '../../src/domain/secrets';
import { type Config, loadConfig } from '../../src/config';
import { ContractChecker } from './contract';
import { CAST_PASSWORD } from './cast-password';
import { freshDatabase, TestDb } from './databases';
import { runCastPasswordHash } from './template-databases';

let spec: SpecIndex | null = null;
/** The contract, as test/global-setup.js bundled it for this run. */
export const testSpec = async () => (spec ??= loadSpecFile(path.join(__dirname, '..', '..', 'dist', 'openapi.dereferenced.json')));

export { CAST_PASSWORD };

/**
 * The cast's password hash, made once per jest run (test/support/build-templates.ts),
 * or once per test file outside one: scrypt takes about 0.1 s of CPU by design, and
 * seven of them for every test server added minutes to a run. The cast then share
 * one salt, which nothing here can tell.
 */
let castPasswordHash: Promise<string> | undefined;
const castHash = () => (castPasswordHash ??= Promise.resolve(runCastPasswordHash() ?? hashPassword(CAST_PASSWORD)));

export type CastName = 'owner' | 'admin' | 'moderator' | 'member' | 'guest' | 'bot' | 'deactivated';
export type Cast = Record<CastName, UserRow>;

export interface TestServer {
  ctx: AppContext;
  app: Express;
  spec: SpecIndex;
  realmId: number;
  cast: Cast;
  /** HTTP client whose every response is checked against openapi/. */
  api: ApiClient;
  close(): Promise<void>;
}

/**
 * A fresh database (or the given, migrated one), a realm with the named cast of users, and the app over it.
 * `clock`: what the event queues tell time by (test/support/clock.ts ManualClock), the system's by default.
 */
export async function startTestServer(
  dialect: Dialect,
  given?: TestDb,
  opts: { clock?: Clock; dataDir?: string; config?: Partial<Config>; bus?: EventBus; flushOnRawWrites?: boolean } = {},
): Promise<TestServer> {
  const testDb: TestDb = given ?? (await freshDatabase(dialect));
  const spec = await testSpec();
  // Tests send far more than Zulip's limits allow a client; test/rate-limits.test.ts turns them on.
  // No built web client unless a test gives one (WEB_DIST_DIR): `/` is the organization's page even
  // in a checkout where web/dist was built.
  const config: Config = {
    ...loadConfig({ RATE_LIMITS: 'off', SOFT_DEACTIVATION_DAYS: '0' }),
    dataDir: opts.dataDir ?? '/nonexistent',
    webDistDir: '/nonexistent',
    ...opts.config,
  };
  const ctx: AppContext = createContext(testDb.db, config, opts.bus, undefined, opts.clock);
  if (opts.flushOnRawWrites ?? true) flushCachesOnRawWrites(ctx);
  const realmId = await doCreateRealm(ctx.db, { stringId: '', name: 'Test Organization' });
  const roles: Array<[CastName, number, Partial<{ isBot: boolean; canCreateUsers: boolean }>]> = [
    ['owner', Role.OWNER, { canCreateUsers: true }],
    ['admin', Role.ADMINISTRATOR, { canCreateUsers: true }],
    ['moderator', Role.MODERATOR, {}],
    ['member', Role.MEMBER, {}],
    ['guest', Role.GUEST, {}],
    ['bot', Role.MEMBER, { isBot: true }],
    ['deactivated', Role.MEMBER, {}],
  ];
  const cast = {} as Cast;
  const passwordHash = await castHash();
  await inTransaction(ctx.db, async (tx) => {
    for (const [name, role, extra] of roles) {
      const user = await createUserInTx(tx, null, {
        realmId,
        email: `${name}@example.com`,
        fullName: `Test ${name[0]!.toUpperCase()}${name.slice(1)}`,
        role,
        isBot: extra.isBot,
        botType: extra.isBot ? 1 : null,
        canCreateUsers: extra.canCreateUsers,
      });
      await updateUser(tx.trx, user.id, { password_hash: passwordHash });
      cast[name] = { ...user, password_hash: passwordHash };
    }
  });
  await doDeactivateUser(ctx, cast.deactivated.id);
  cast.deactivated = (await getUserById(ctx.db, cast.deactivated.id))!;
  const app = buildApp({ ctx, spec });
  return {
    ctx,
    app,
    spec,
    realmId,
    cast,
    api: new ApiClient(app, new ContractChecker(spec)),
    close: () => (ctx.push?.stop(), ctx.outgoingWebhooks.stop(), ctx.missedMessages.stop(), testDb.drop()),
  };
}

/**
 * Tests set up states no API reaches by writing rows with knex directly, as
 * an operator editing SQL by hand would; the server's caches (src/cache/)
 * cannot know. After every such write (a statement outside any transaction
 * that changes a cached table) the harness empties them, as `cache flush`
 * does. Actions write inside transactions and publish their own exact
 * invalidations; test/cache-invalidation.test.ts turns this off to prove it.
 */
const CACHED_TABLE_WRITE =
  /^\s*(insert|update|delete|replace)\b[\s\S]*\b`?"?(users|realms|channels|subscriptions|user_groups|group_members|group_subgroups|realm_domains|realm_playgrounds)`?"?(\s|$|\()/i;
/** The server's own bare write of last_active_time (src/queries/activity.ts), which no cache serves. */
const ACTIVITY = /^update [`"]?users[`"]? set [`"]?last_active_time[`"]? = \?/i;
function flushCachesOnRawWrites(ctx: AppContext): void {
  ctx.db.on('query-response', (_response: unknown, query: { sql?: string; __knexTxId?: string }) => {
    if (!query.__knexTxId && query.sql && CACHED_TABLE_WRITE.test(query.sql) && !ACTIVITY.test(query.sql))
      ctx.caches.apply({ kind: 'all' });
  });
}

type Method = 'get' | 'post' | 'patch' | 'delete' | 'put';

export interface ApiResponse {
  status: number;
  body: Record<string, any>;
  headers: Record<string, string>;
}

export class ApiClient {
  constructor(
    private readonly app: Express,
    private readonly contract: ContractChecker,
  ) {}

  /** A request as `user` (or unauthenticated with null); form fields are sent urlencoded unless `multipart`. */
  async call(
    method: Method,
    path: string,
    user: UserRow | null,
    fields: Record<string, unknown> = {},
    opts: { multipart?: boolean; query?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const url = `/api/v1${path}`;
    let req = request(this.app)[method](url);
    if (user) req = req.auth(user.email, user.api_key);
    for (const [k, v] of Object.entries(opts.headers ?? {})) req = req.set(k, v);
    const encoded = encodeFields(fields);
    if (opts.query) req = req.query(encodeFields(opts.query));
    if (method === 'get') {
      req = req.query(encoded);
    } else if (opts.multipart) {
      for (const [k, v] of Object.entries(encoded)) req = req.field(k, v);
    } else if (Object.keys(encoded).length) {
      req = req.type('form').send(encoded);
    }
    const res = await req;
    const body = res.body as Record<string, any>;
    this.contract.check(method, url + (opts.query ? '' : ''), res.status, body);
    return { status: res.status, body, headers: res.headers as Record<string, string> };
  }

  get = (path: string, user: UserRow | null, query: Record<string, unknown> = {}) => this.call('get', path, user, query);
  post = (path: string, user: UserRow | null, fields: Record<string, unknown> = {}) => this.call('post', path, user, fields);
  patch = (path: string, user: UserRow | null, fields: Record<string, unknown> = {}) => this.call('patch', path, user, fields);
  delete = (path: string, user: UserRow | null, fields: Record<string, unknown> = {}) => this.call('delete', path, user, fields);
}

/** Zulip clients send non-string parameters as JSON text. */
export function encodeFields(fields: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

/** Creates a channel through the action, with these subscribers (by cast or user rows). */
export async function createChannel(
  t: TestServer,
  name: string,
  subscribers: UserRow[],
  opts: { inviteOnly?: boolean; historyPublicToSubscribers?: boolean; creator?: UserRow } = {},
): Promise<{ id: number; recipient_id: number }> {
  const { createChannelInTx } = await import('../../src/actions/channels');
  const id = await inTransaction(t.ctx.db, (tx) =>
    createChannelInTx(tx, opts.creator ?? t.cast.owner, {
      name,
      inviteOnly: opts.inviteOnly,
      historyPublicToSubscribers: opts.historyPublicToSubscribers,
      subscriberIds: subscribers.map((u) => u.id),
    }),
  );
  const row = await t.ctx.db('channels').where({ id }).first('id', 'recipient_id');
  return row as { id: number; recipient_id: number };
}

/** Subscribes users to a channel through the action. */
export async function subscribe(t: TestServer, channel: { recipient_id: number }, users: UserRow[]): Promise<void> {
  const { subscribeInTx } = await import('../../src/actions/channels');
  await inTransaction(t.ctx.db, (tx) =>
    subscribeInTx(
      tx,
      channel.recipient_id,
      users.map((u) => u.id),
    ),
  );
}

/** Makes more members (for thresholds such as wildcard mentions). */
export async function createMembers(t: TestServer, prefix: string, n: number): Promise<UserRow[]> {
  const users: UserRow[] = [];
  await inTransaction(t.ctx.db, async (tx) => {
    for (let i = 0; i < n; i++) {
      users.push(
        await createUserInTx(tx, null, { realmId: t.realmId, email: `${prefix}${i}@example.com`, fullName: `${prefix} Person ${i}` }),
      );
    }
  });
  return users;
}

/**
 * Counts the SQL statements a piece of work issues. On MySQL a packet may
 * carry several (BEGIN and held writes travel with the next statement,
 * src/db/mysql/pipelined-client.ts): each counts.
 */
export async function countQueries<T>(t: TestServer, work: () => Promise<T>): Promise<{ result: T; queries: number }> {
  // The missed-message decisions of earlier sends run after their commit, off the request: settled
  // first, so none of their statements lands in this count.
  await t.ctx.missedMessages.whenIdle();
  let queries = 0;
  const onQuery = (q: { sql: string }) => (queries += statementsOf(q.sql).length);
  t.ctx.db.on('query', onQuery);
  try {
    const result = await work();
    return { result, queries };
  } finally {
    t.ctx.db.removeListener('query', onQuery);
  }
}

/** The statements of one packet's text (src/db/mysql/pipelined-client.ts joins them with ';\n'). */
export const statementsOf = (sql: string): string[] => sql.split(';\n');
