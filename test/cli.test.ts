import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { parseZuliprc } from '../src/cli/zuliprc';
import { eachDatabase } from './support/databases';
import { lastLine, runCli, type CliResult } from './support/cli';
import { newInstance, type Instance } from './support/instances';
import { startServerProcess, type ServerProcess } from './support/server-process';

/** The CLI as an operator runs it: a process of its own, on a DATA_DIR (SQLite) or a DATABASE_URL (MariaDB) of the test's. */
eachDatabase('the command line', (dialect) => {
  /** Whether the instance holds a database: for SQLite its file (opening it would create it), for MariaDB any table. */
  async function hasDatabase(instance: Instance): Promise<boolean> {
    if (!instance.databaseUrl) return fs.existsSync(path.join(instance.dataDir, 'parley.sqlite3'));
    const rows = await instance.open().raw('SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE()');
    return Number(rows[0][0].n) > 0;
  }

  /** One line on stderr, the problem, and a failing exit status. */
  function expectRefusal(result: CliResult, line: string | RegExp): void {
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    if (typeof line === 'string') expect(lastLine(result.stderr)).toBe(line);
    else expect(lastLine(result.stderr)).toMatch(line);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
  }

  describe('where DATA_DIR / DATABASE_URL holds no Parley database', () => {
    let instance: Instance;
    beforeAll(async () => {
      instance = await newInstance(dialect);
    });
    afterAll(() => instance.drop());

    it('refuses every command that would only find it empty, naming where it looked, and creates nothing', async () => {
      const where =
        dialect === 'sqlite'
          ? `in DATA_DIR=${instance.dataDir} (no ${path.join(instance.dataDir, 'parley.sqlite3')})`
          : `at DATABASE_URL=${instance.databaseUrl!.replace(/:[^:@/]*@/, ':***@')} (it was never migrated)`;
      const commands = [
        ['create-user', '--email', 'ann@example.com', '--name', 'Ann Example'],
        ['api-key', '--email', 'ann@example.com'],
        ['zuliprc', '--email', 'ann@example.com'],
        ['audit-log'],
        ['cache', 'flush'],
      ];
      const results = await Promise.all(commands.map((args) => runCli(args, instance.env)));
      for (const result of results) {
        expectRefusal(
          result,
          `No Parley database ${where}: run "migrate" first, or set ${dialect === 'sqlite' ? 'DATA_DIR' : 'DATABASE_URL'} to the server's.`,
        );
      }
      expect(await hasDatabase(instance)).toBe(false);
    });

    it('migrate creates it, and then the others find it', async () => {
      const migrate = await runCli(['migrate'], instance.env);
      expect([migrate.code, migrate.stdout]).toEqual([0, 'Database is up to date.\n']);
      expect(await hasDatabase(instance)).toBe(true);
      // Past the check: the database is there, the organization is not.
      expectRefusal(await runCli(['audit-log'], instance.env), "No organization with string id ''");
    });
  });

  describe('create-realm and create-user check their arguments as the API does', () => {
    let instance: Instance;
    beforeAll(async () => {
      instance = await newInstance(dialect);
    });
    afterAll(() => instance.drop());

    it('create-realm refuses a bad subdomain or name before it makes any database', async () => {
      const cases: Array<[string[], string | RegExp]> = [
        [['--string-id', 'ab', '--name', 'Ab'], 'Subdomain needs to have length 3 or greater.'],
        [['--string-id=-acme', '--name', 'Acme'], "Subdomain cannot start or end with a '-'."],
        [['--string-id', 'Acme', '--name', 'Acme'], "Subdomain can only have lowercase letters, numbers, and '-'s."],
        [['--string-id', 'a'.repeat(41), '--name', 'Acme'], 'Subdomain may have at most 40 characters.'],
        [['--string-id', 'acme', '--name', '  '], "Organization name can't be empty."],
        [['--string-id', 'acme', '--name', 'N'.repeat(41)], 'Organization name is too long.'],
        [['--name', 'Acme'], '--string-id is required'],
        // A bad argument, in node's words: on one line too.
        [['--string-id', '-acme', '--name', 'Acme'], /^Option '--string-id' argument is ambiguous\. Did you forget/],
      ];
      const results = await Promise.all(cases.map(([args]) => runCli(['create-realm', ...args], instance.env)));
      results.forEach((result, i) => expectRefusal(result, cases[i]![1]));
      expect(await hasDatabase(instance)).toBe(false);
    });

    it("create-realm makes the organization (and the database) and prints the organization's URL; the subdomain again is refused", async () => {
      const made = await runCli(['create-realm', '--string-id', 'acme', '--name', 'Acme'], instance.env);
      expect([made.code, made.stdout, made.stderr]).toEqual([0, 'Created organization 1 at http://acme.localhost:9991.\n', '']);
      const again = await runCli(['create-realm', '--string-id', 'acme', '--name', 'Acme again'], instance.env);
      expectRefusal(again, 'Subdomain already in use. Please choose a different one.');
    });

    it('create-user refuses what POST /users refuses, and creates nobody', async () => {
      const base = { '--realm': 'acme', '--email': 'ann@example.com', '--name': 'Ann Example', '--password': 'correct-horse-battery' };
      const cases: Array<[Record<string, string>, string]> = [
        [{ '--email': '' }, '--email "" is not a valid email address.'],
        [{ '--email': 'ann at example.com' }, '--email "ann at example.com" is not a valid email address.'],
        [{ '--name': '' }, 'Name too short!'],
        [{ '--name': 'A' }, 'Name too short!'],
        [{ '--name': 'Ann *bold*' }, 'Invalid characters in name!'],
        [{ '--password': 'x' }, 'The password is too weak.'],
        [{ '--role': 'boss' }, "Unknown role 'boss' (owner, admin, moderator, member or guest)"],
      ];
      const results = await Promise.all(
        cases.map(([changes]) => runCli(['create-user', ...Object.entries({ ...base, ...changes }).flat()], instance.env)),
      );
      results.forEach((result, i) => expectRefusal(result, cases[i]![1]));
      expect(await instance.open()('users').count({ n: '*' })).toEqual([{ n: 0 }]);
    });

    it('create-user makes the account; without --password it has an API key only', async () => {
      const made = await runCli(
        ['create-user', '--realm', 'acme', '--email', ' Ann@Example.com ', '--name', ' Ann Example '],
        instance.env,
      );
      expect(made.code).toBe(0);
      expect(made.stdout).toMatch(/^Created user \d+ <Ann@Example\.com>\nAPI key: [A-Za-z0-9]{32}\n$/);
      const row = await instance.open()('users').where({ email_key: 'ann@example.com' }).first('full_name', 'password_hash');
      expect(row).toEqual({ full_name: 'Ann Example', password_hash: null });
    });
  });

  describe("zuliprc writes the organization's own site, where its key works", () => {
    let instance: Instance;
    let server: ServerProcess | null = null;
    afterAll(async () => {
      await server?.stop();
      await instance.drop();
    });

    // Nine CLI processes and a server, each compiled on load.
    it('for organization acme: acme. before the server address, at the port the server listens on', async () => {
      instance = await newInstance(dialect);
      const run = async (args: string[], env: Record<string, string> = {}) => {
        const result = await runCli(args, { ...instance.env, ...env });
        if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
        return result.stdout;
      };
      // acme first (the server prints the first organization's owner), then the root organization.
      await run(['create-realm', '--string-id', 'acme', '--name', 'Acme']);
      await run(['create-user', '--realm', 'acme', '--email', 'boss@acme.example', '--name', 'Acme Boss', '--role', 'owner']);
      await run(['create-realm', '--string-id', '', '--name', 'Root']);
      await run(['create-user', '--realm', '', '--email', 'root@example.com', '--name', 'Root Owner', '--role', 'owner']);

      const port = await freePort();
      server = await startServerProcess({ ...instance.env, DATABASE_URL: instance.databaseUrl ?? '', PORT: String(port) });
      // Given the server's settings, the CLI derives the server's address as the server does.
      const zuliprc = parseZuliprc(await run(['zuliprc', '--realm', 'acme', '--email', 'boss@acme.example'], { PORT: String(port) }));
      expect(zuliprc.site).toBe(`http://acme.localhost:${port}`);
      // And without them, the server's defaults: port 9991.
      expect(parseZuliprc(await run(['zuliprc', '--realm', 'acme', '--email', 'boss@acme.example'])).site).toBe(
        'http://acme.localhost:9991',
      );
      // EXTERNAL_URL, when the server has one, is where every organization's site is made from.
      const external = await run(['zuliprc', '--realm', 'acme', '--email', 'boss@acme.example'], {
        EXTERNAL_URL: 'https://chat.example.com/',
      });
      expect(parseZuliprc(external).site).toBe('https://acme.chat.example.com');

      // A client of that site: acme.localhost resolves to the loopback address, where the server listens.
      const host = new URL(zuliprc.site!).host;
      const auth = { email: zuliprc.email!, key: zuliprc.key! };
      const me = await get(port, host, '/api/v1/users/me', auth);
      expect([me.status, me.body.email]).toEqual([200, 'boss@acme.example']);
      const settings = await get(port, host, '/api/v1/server_settings');
      expect([settings.body.realm_name, settings.body.realm_url]).toEqual(['Acme', zuliprc.site]);
      // The root organization's site is another organization: the key is refused there.
      expect((await get(port, `127.0.0.1:${port}`, '/api/v1/users/me', auth)).status).toBe(401);
      // The server's own zuliprc for acme's owner (DATA_DIR/zuliprc) names the same site.
      expect(server.owner.email).toBe('boss@acme.example');
      expect(parseZuliprc(fs.readFileSync(path.join(instance.dataDir, 'zuliprc'), 'utf8')).site).toBe(zuliprc.site);
    }, 180_000);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** GET from the server on 127.0.0.1 with this Host header, as `curl --resolve` sends it. */
function get(port: number, host: string, urlPath: string, auth?: { email: string; key: string }): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { Host: host };
  if (auth) headers.Authorization = `Basic ${Buffer.from(`${auth.email}:${auth.key}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
}
