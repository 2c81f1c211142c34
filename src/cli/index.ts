import { parseArgs } from 'node:util';
import { doCreateRealm } from '../actions/realms';
import { auditLogCommand } from './audit-log';
import { createUserInTx, doRegenerateApiKey } from '../actions/users';
import { loadConfig } from '../config';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { Role } from '../domain/roles';
import { BackupError } from '../db/backup/errors';
import { ApiError } from '../errors';
import { getRealmByStringId } from '../queries/realms';
import type { UserRow } from '../queries/rows';
import { getUserByEmailKey } from '../queries/users';
import { startContext } from '../server';
import { collectForOtherProcesses, recordInvalidations } from '../cache/remote';
import { BACKUP_USAGE, backupCommand } from './backup';
import { DEMO_PASSWORD, ensureDemoOrganization } from './demo';
import { writeZuliprc, zuliprcText } from './zuliprc';

const USAGE = `Parley administration (npm run cli -- <command> [options])

  migrate                                  apply database migrations
  seed-demo                                create the demo organization if the database is empty
  create-realm --string-id ID --name NAME [--description TEXT]
                                           create an organization ("" is the root organization)
  create-user --email EMAIL --name NAME [--realm ID] [--role owner|admin|moderator|member|guest]
              [--password PASSWORD] [--can-create-users]
                                           create a user and print the API key
  api-key --email EMAIL [--realm ID] [--regenerate]
                                           print (or replace and print) a user's API key
  zuliprc --email EMAIL [--realm ID] [--output FILE] [--site URL]
                                           print a zuliprc for a user, or write it to FILE
  audit-log [--realm ID] [--user EMAIL] [--limit N] [--json]
                                           print the audit log, newest first (50 rows unless
                                           --limit, at most 1000); --user: rows by or about them
  cache flush                              empty the caches of every running server (within
                                           CACHE_POLL_MS): for SQL edited by hand; the
                                           commands above tell the servers what they change
${BACKUP_USAGE}

Configuration comes from the environment: DATA_DIR, DATABASE_URL, EXTERNAL_URL.`;

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
  // Before startContext: a backup must not migrate the database it copies, nor a restore its target.
  if (command === 'backup' || command === 'restore') return backupCommand(command, rest);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: command === 'cache',
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
    },
    strict: true,
  });
  const config = loadConfig();
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
        const id = await doCreateRealm(ctx.db, {
          stringId: need(values['string-id'], '--string-id'),
          name: need(values.name, '--name'),
          description: values.description,
        });
        process.stdout.write(`Created organization ${id}.\n`);
        return 0;
      }
      case 'create-user': {
        const realm = await realmOf(ctx, values.realm!);
        const role = Object.hasOwn(ROLES, values.role ?? '') ? ROLES[values.role!] : undefined;
        if (role === undefined) throw new ApiError(`Unknown role '${values.role}'`);
        const user = await inTransaction(ctx.db, (tx) =>
          createUserInTx(tx, ctx.bus, {
            realmId: realm.id,
            email: need(values.email, '--email'),
            fullName: need(values.name, '--name'),
            role,
            password: values.password ?? null,
            canCreateUsers: values['can-create-users'],
          }),
        );
        process.stdout.write(`Created user ${user.id} <${user.email}>\nAPI key: ${user.api_key}\n`);
        return 0;
      }
      case 'api-key': {
        const user = await userOf(ctx, values.realm!, need(values.email, '--email'));
        const key = values.regenerate ? await doRegenerateApiKey(ctx.db, user) : user.api_key;
        process.stdout.write(key + '\n');
        return 0;
      }
      case 'zuliprc': {
        const user = await userOf(ctx, values.realm!, need(values.email, '--email'));
        const site = values.site ?? config.externalUrl;
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
      case 'cache': {
        if (positionals[0] !== 'flush') throw new ApiError('Usage: cache flush');
        await recordInvalidations(ctx.db, [{ kind: 'all' }]);
        process.stdout.write(`Running servers will empty their caches within ${config.cachePollMs} ms.\n`);
        return 0;
      }
      default:
        process.stderr.write(`Unknown command '${command}'.\n\n${USAGE}\n`);
        return 2;
    }
  } finally {
    try {
      await invalidations.flush();
    } finally {
      await ctx.db.destroy();
    }
  }
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

async function userOf(ctx: AppContext, realmStringId: string, email: string): Promise<UserRow> {
  const realm = await realmOf(ctx, realmStringId);
  const user = await getUserByEmailKey(ctx.db, realm.id, email.trim().toLowerCase());
  if (!user) throw new ApiError(`No user ${email} in that organization`);
  return user;
}

/**
 * Errors an operator can act on print as one line: ours, and those carrying a
 * system or driver code (ENOENT, ECONNREFUSED, SQLITE_BUSY, ER_ACCESS_DENIED_ERROR,
 * a bad argument). Anything else is a bug: its stack is printed.
 */
function describe(err: unknown): string {
  if (err instanceof ApiError || err instanceof BackupError) return err.message;
  if (err instanceof Error) return typeof (err as { code?: unknown }).code === 'string' ? err.message : (err.stack ?? err.message);
  return String(err);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${describe(err)}\n`);
    process.exit(1);
  },
);
