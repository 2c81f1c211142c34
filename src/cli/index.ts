import { parseArgs } from 'node:util';
import { checkNewRealm, doCreateRealm } from '../actions/realms';
import { auditLogCommand } from './audit-log';
import { uploadQuotaCommand } from './upload-quota';
import { createUserInTx, doRegenerateApiKey } from '../actions/users';
import { doCreateBotForOwner } from '../actions/bots';
import { type Config, loadConfig, settingsHelp, withoutPassword } from '../config';
import type { AppContext } from '../context';
import { sqliteFileOf } from '../db/connection';
import { isParleyDatabase } from '../db/existing';
import { inTransaction } from '../db/transaction';
import { hasSubdomains, realmHost, realmUrl } from '../domain/realm-address';
import { Role } from '../domain/roles';
import { BotType, checkNewAccount } from '../domain/users';
import { BackupError } from '../db/backup/errors';
import { ApiError } from '../errors';
import { getRealmByStringId } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { listRealmBots } from '../queries/bots';
import { getUserByEmailKey, listUsersByIds } from '../queries/users';
import { startContext } from '../server';
import { collectForOtherProcesses, recordInvalidations } from '../cache/remote';
import { BACKUP_USAGE, backupCommand } from './backup';
import { archiveExpiredCommand, restoreCommand, RETENTION_USAGE } from './retention';
import { DEMO_PASSWORD, ensureDemoOrganization } from './demo';
import { writeZuliprc, zuliprcText } from './zuliprc';
import { SEND_TEST_EMAIL_USAGE, sendTestEmailCommand } from './send-test-email';
import { SOFT_DEACTIVATE_USAGE, softDeactivateCommand } from './soft-deactivate';

/** Every command; anything else is refused before a database is opened. */
const COMMANDS = [
  'migrate',
  'seed-demo',
  'create-realm',
  'create-user',
  'create-bot',
  'list-bots',
  'api-key',
  'zuliprc',
  'audit-log',
  'upload-quota',
  'cache',
  'archive-expired',
  'restore-retention',
  'restore-archived',
  'backup',
  'restore',
  'send-test-email',
  'soft-deactivate',
];

/**
 * The commands that make the database when DATA_DIR / DATABASE_URL holds
 * none: the ways an operator starts one. The others would only find it empty
 * (and leave an empty database behind), so they refuse, naming where they
 * looked: a mistyped DATA_DIR shows at once. backup and restore have rules
 * of their own (a backup needs a database; a restore makes one).
 */
const CREATES_DATABASE = new Set(['migrate', 'seed-demo', 'create-realm']);

const USAGE = `Parley administration (npm run cli -- <command> [options])

  migrate                                  create the database if there is none, and apply migrations
  seed-demo                                create the demo organization if the database is empty
  create-realm --string-id ID --name NAME [--description TEXT]
                                           create an organization: "" is the root organization, at
                                           EXTERNAL_URL; ID is at EXTERNAL_URL with ID. before its host
  create-user --email EMAIL --name NAME [--realm ID] [--role owner|admin|moderator|member|guest]
              [--password PASSWORD] [--can-create-users]
                                           create a user and print the API key (no --password: the
                                           account has an API key only)
  create-bot --owner EMAIL --name NAME --short-name NAME [--realm ID]
             [--type generic|incoming|outgoing] [--payload-url URL]
                                           create a bot owned by OWNER, as POST /bots does (its email
                                           is NAME-bot@ the organization's host), and print its API key
  list-bots [--realm ID] [--owner EMAIL]   print the organization's bots (or OWNER's): ID, email, type,
                                           owner, whether active, API key
  api-key --email EMAIL [--realm ID] [--regenerate]
                                           print (or replace and print) a user's API key
  zuliprc --email EMAIL [--realm ID] [--output FILE] [--site URL]
                                           print a zuliprc for a user, or write it to FILE; its site is
                                           the organization's URL unless --site
  audit-log [--realm ID] [--user EMAIL] [--limit N] [--json]
                                           print the audit log, newest first (50 rows unless
                                           --limit, at most 1000); --user: rows by or about them
  upload-quota [--realm ID] [--mib N | --none]
                                           print an organization's upload quota and space used;
                                           --mib sets the quota, --none removes it
  cache flush                              empty the caches of every running server (within
                                           CACHE_POLL_MS): for SQL edited by hand; the
                                           commands above tell the servers what they change
${SOFT_DEACTIVATE_USAGE}
${SEND_TEST_EMAIL_USAGE}
${RETENTION_USAGE}
${BACKUP_USAGE}

migrate, seed-demo and create-realm create the database where DATA_DIR / DATABASE_URL
points if it holds none (a MariaDB database must exist: they create its tables). The other
commands refuse to work on a database never migrated, naming where they looked: run migrate
first, or point DATA_DIR / DATABASE_URL at the server's.

Settings: environment variables, read as the server reads them. Give the CLI the server's:
the site zuliprc writes is made from EXTERNAL_URL (or HOST and PORT).
${settingsHelp()}`;

const ROLES: Record<string, number> = {
  owner: Role.OWNER,
  admin: Role.ADMINISTRATOR,
  administrator: Role.ADMINISTRATOR,
  moderator: Role.MODERATOR,
  member: Role.MEMBER,
  guest: Role.GUEST,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(USAGE + '\n');
    return command ? 0 : 2;
  }
  if (!COMMANDS.includes(command)) {
    process.stderr.write(`Unknown command '${command}'.\n\n${USAGE}\n`);
    return 2;
  }
  // Before startContext: a backup must not migrate the database it copies, nor a restore its target.
  if (command === 'backup' || command === 'restore') return backupCommand(command, rest);
  // Needs no database: mail goes out through the settings alone.
  if (command === 'send-test-email')
    return sendTestEmailCommand(loadConfig(), parseArgs({ args: rest, allowPositionals: true, options: {} }).positionals);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: command === 'cache' || command === 'soft-deactivate',
    options: {
      'string-id': { type: 'string' },
      name: { type: 'string' },
      description: { type: 'string' },
      email: { type: 'string' },
      realm: { type: 'string', default: '' },
      role: { type: 'string', default: 'member' },
      password: { type: 'string' },
      'can-create-users': { type: 'boolean', default: false },
      regenerate: { type: 'boolean', default: false },
      output: { type: 'string' },
      site: { type: 'string' },
      user: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      mib: { type: 'string' },
      none: { type: 'boolean', default: false },
      channel: { type: 'string' },
      since: { type: 'string' },
      transaction: { type: 'string' },
      owner: { type: 'string' },
      'short-name': { type: 'string' },
      type: { type: 'string', default: 'generic' },
      'payload-url': { type: 'string' },
      'inactive-for': { type: 'string' },
      activate: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const config = loadConfig();
  // The arguments are checked first, with the API's own rules: a refused one leaves nothing behind.
  const newRealm =
    command === 'create-realm'
      ? checkNewRealm({
          stringId: need(values['string-id'], '--string-id'),
          name: need(values.name, '--name'),
          description: values.description,
        })
      : null;
  const newUser = command === 'create-user' ? checkCliUser(values) : null;
  if (!CREATES_DATABASE.has(command) && !(await isParleyDatabase(config))) throw new ApiError(noDatabase(config));
  const ctx = await startContext(config);
  // What this command changes, for the running servers' caches (src/cache/remote.ts).
  const invalidations = collectForOtherProcesses(ctx.bus, ctx.db);
  try {
    switch (command) {
      case 'migrate':
        process.stdout.write('Database is up to date.\n');
        return 0;
      case 'seed-demo': {
        const { created, owner } = await ensureDemoOrganization(ctx);
        process.stdout.write(
          created
            ? `Created the demo organization (password for every demo user: ${DEMO_PASSWORD}).\n`
            : 'The database already has an organization.\n',
        );
        if (owner) process.stdout.write(`Owner: ${owner.email} ${owner.api_key}\n`);
        return 0;
      }
      case 'create-realm': {
        const id = await doCreateRealm(ctx.db, newRealm!);
        const url = realmUrl(config.externalUrl, newRealm!.stringId);
        process.stdout.write(`Created organization ${id} at ${url}.\n`);
        if (newRealm!.stringId !== '' && !hasSubdomains(config.externalUrl)) {
          process.stderr.write(
            `Warning: EXTERNAL_URL ${config.externalUrl} is an IP address, which has no subdomains: set it to a host name (with DNS for *.that name) for ${url} to be reachable.\n`,
          );
        }
        return 0;
      }
      case 'create-user': {
        const realm = await realmOf(ctx, values.realm!);
        const user = await inTransaction(ctx.db, (tx) =>
          createUserInTx(tx, ctx.bus, { ...newUser!, realmId: realm.id, canCreateUsers: values['can-create-users'] }),
        );
        process.stdout.write(`Created user ${user.id} <${user.email}>\nAPI key: ${user.api_key}\n`);
        return 0;
      }
      case 'create-bot': {
        const botType = BOT_TYPES[values.type!];
        if (botType === undefined) throw new ApiError(`Unknown bot type '${values.type}' (generic, incoming or outgoing)`);
        const { realm, user: owner } = await userOf(ctx, values.realm!, need(values.owner, '--owner'));
        const bot = await doCreateBotForOwner(ctx, owner, realmHost(config.externalUrl, realm.string_id), {
          fullName: need(values.name, '--name'),
          shortName: need(values['short-name'], '--short-name'),
          botType,
          payloadUrl: values['payload-url'],
        });
        process.stdout.write(`Created bot ${bot.id} <${bot.email}>\nAPI key: ${bot.api_key}\n`);
        return 0;
      }
      case 'list-bots': {
        const realm = await realmOf(ctx, values.realm!);
        const owner = values.owner === undefined ? null : (await userOf(ctx, values.realm!, values.owner)).user;
        process.stdout.write(await listBotsCommand(ctx.db, realm.id, owner));
        return 0;
      }
      case 'api-key': {
        const { user } = await userOf(ctx, values.realm!, need(values.email, '--email'));
        const key = values.regenerate ? await doRegenerateApiKey(ctx.db, user) : user.api_key;
        process.stdout.write(key + '\n');
        return 0;
      }
      case 'zuliprc': {
        const { realm, user } = await userOf(ctx, values.realm!, need(values.email, '--email'));
        // The organization's own URL: the key works nowhere else.
        const site = values.site ?? realmUrl(config.externalUrl, realm.string_id);
        if (values.output) {
          process.stdout.write(`Wrote ${writeZuliprc(process.cwd(), values.output, user.email, user.api_key, site)}\n`);
        } else {
          process.stdout.write(zuliprcText(user.email, user.api_key, site));
        }
        return 0;
      }
      case 'audit-log':
        process.stdout.write(
          await auditLogCommand(ctx.db, { realm: values.realm!, user: values.user, limit: values.limit, json: values.json }),
        );
        return 0;
      case 'upload-quota':
        process.stdout.write(await uploadQuotaCommand(ctx.db, await realmOf(ctx, values.realm!), values));
        return 0;
      case 'cache': {
        if (positionals[0] !== 'flush') throw new ApiError('Usage: cache flush');
        await recordInvalidations(ctx.db, [{ kind: 'all' }]);
        process.stdout.write(`Running servers will empty their caches within ${config.cachePollMs} ms.\n`);
        return 0;
      }
      case 'soft-deactivate':
        process.stdout.write(await softDeactivateCommand(ctx.db, await realmOf(ctx, values.realm!), values, positionals));
        return 0;
      case 'archive-expired':
        process.stdout.write(await archiveExpiredCommand(ctx));
        return 0;
      case 'restore-retention':
      case 'restore-archived':
        process.stdout.write(
          await restoreCommand(ctx, command, {
            realm: values.realm!,
            channel: values.channel,
            since: values.since,
            transaction: values.transaction,
          }),
        );
        return 0;
      default:
        throw new Error(`command '${command}' is listed but not handled`);
    }
  } finally {
    try {
      await invalidations.flush();
    } finally {
      await ctx.db.destroy();
    }
  }
}

/** create-bot's --type: Zulip's bot types Parley runs. */
const BOT_TYPES: Record<string, number> = {
  generic: BotType.DEFAULT,
  incoming: BotType.INCOMING_WEBHOOK,
  outgoing: BotType.OUTGOING_WEBHOOK,
};
const BOT_TYPE_NAMES = new Map(Object.entries(BOT_TYPES).map(([name, code]) => [code, name]));

/** list-bots: one tab-separated line a bot, oldest first, under a header. */
async function listBotsCommand(db: AppContext['db'], realmId: number, owner: UserRow | null): Promise<string> {
  const bots = await listRealmBots(db, realmId, owner?.id ?? null);
  const owners = new Map(
    (
      await listUsersByIds(
        db,
        realmId,
        bots.flatMap((b) => (b.bot_owner_id === null ? [] : [b.bot_owner_id])),
      )
    ).map((u) => [u.id, u.email]),
  );
  const lines = bots.map((b) =>
    [
      b.id,
      b.email,
      BOT_TYPE_NAMES.get(b.bot_type ?? 0) ?? String(b.bot_type),
      owners.get(b.bot_owner_id ?? 0) ?? '-',
      b.is_active ? 'active' : 'deactivated',
      b.api_key,
    ].join('\t'),
  );
  return ['id\temail\ttype\towner\tstatus\tapi_key', ...lines].join('\n') + '\n';
}

/** create-user's account by POST /users's rules (the password optional: without one the account has an API key only). */
function checkCliUser(values: { email?: string; name?: string; password?: string; role?: string }) {
  const role = Object.hasOwn(ROLES, values.role ?? '') ? ROLES[values.role!] : undefined;
  if (role === undefined) throw new ApiError(`Unknown role '${values.role}' (owner, admin, moderator, member or guest)`);
  const email = need(values.email, '--email');
  const account = checkNewAccount(
    { email, fullName: need(values.name, '--name'), password: values.password ?? null },
    `--email ${JSON.stringify(email)} is not a valid email address.`,
  );
  return { ...account, role };
}

/** The one line a command prints when DATA_DIR / DATABASE_URL holds no Parley database. */
function noDatabase(config: Config): string {
  return config.databaseUrl
    ? `No Parley database at DATABASE_URL=${withoutPassword(config.databaseUrl)} (it was never migrated): run "migrate" first, or set DATABASE_URL to the server's.`
    : `No Parley database in DATA_DIR=${config.dataDir} (no ${sqliteFileOf(config)}): run "migrate" first, or set DATA_DIR to the server's.`;
}

function need(value: string | undefined, flag: string): string {
  if (value === undefined) throw new ApiError(`${flag} is required`);
  return value;
}

async function realmOf(ctx: AppContext, stringId: string) {
  const realm = await getRealmByStringId(ctx.db, stringId);
  if (!realm) throw new ApiError(`No organization with string id '${stringId}'`);
  return realm;
}

async function userOf(ctx: AppContext, realmStringId: string, email: string): Promise<{ realm: RealmRow; user: UserRow }> {
  const realm = await realmOf(ctx, realmStringId);
  const user = await getUserByEmailKey(ctx.db, realm.id, email.trim().toLowerCase());
  if (!user) throw new ApiError(`No user ${email} in that organization`);
  return { realm, user };
}

/**
 * Errors an operator can act on print as one line: ours, and those carrying a
 * system or driver code (ENOENT, ECONNREFUSED, SQLITE_BUSY, ER_ACCESS_DENIED_ERROR,
 * a bad argument). Anything else is a bug: its stack is printed.
 */
function describe(err: unknown): string {
  if (err instanceof ApiError || err instanceof BackupError) return err.message;
  // One line: a bad argument's message (node's parseArgs) runs over several.
  if (err instanceof Error) return typeof (err as { code?: unknown }).code === 'string' ? oneLine(err.message) : (err.stack ?? err.message);
  return String(err);
}

const oneLine = (text: string) => text.trim().replace(/\s*\n\s*/g, ' ');

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${describe(err)}\n`);
    process.exit(1);
  },
);
