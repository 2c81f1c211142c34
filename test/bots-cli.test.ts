import { eachDatabase } from './support/databases';
import { lastLine, runCli } from './support/cli';
import { newInstance, type Instance } from './support/instances';

/** create-bot and list-bots as an operator runs them: processes of their own on the test's database. */
eachDatabase('the command line: bots', (dialect) => {
  let instance: Instance;
  beforeAll(async () => {
    instance = await newInstance(dialect);
    const realm = await runCli(['create-realm', '--string-id', 'acme', '--name', 'Acme'], instance.env);
    expect(realm.code).toBe(0);
    const user = await runCli(['create-user', '--realm', 'acme', '--email', 'ann@example.com', '--name', 'Ann Example'], instance.env);
    expect(user.code).toBe(0);
  });
  afterAll(() => instance.drop());

  it("create-bot makes a bot owned by the owner named, prints its key, and list-bots lists it; POST /bots's refusals apply", async () => {
    const made = await runCli(
      [
        'create-bot',
        '--realm',
        'acme',
        '--owner',
        'ann@example.com',
        '--name',
        'Deploy Notices',
        '--short-name',
        'deploy',
        '--type',
        'incoming',
      ],
      instance.env,
    );
    expect([made.code, made.stderr]).toEqual([0, '']);
    const m = /^Created bot (\d+) <deploy-bot@acme\.localhost>\nAPI key: ([A-Za-z0-9]{32})\n$/.exec(made.stdout);
    expect(m).not.toBeNull();
    const db = instance.open();
    const owner = await db('users').where({ email_key: 'ann@example.com' }).first('id');
    const row = await db('users')
      .where({ id: Number(m![1]) })
      .first('is_bot', 'bot_type', 'bot_owner_id', 'api_key', 'full_name');
    expect({ ...row, is_bot: Boolean(row!.is_bot) }).toEqual({
      is_bot: true,
      bot_type: 2,
      bot_owner_id: Number(owner!.id),
      api_key: m![2],
      full_name: 'Deploy Notices',
    });

    const again = await runCli(
      ['create-bot', '--realm', 'acme', '--owner', 'ann@example.com', '--name', 'Other', '--short-name', 'deploy'],
      instance.env,
    );
    expect([again.code, lastLine(again.stderr)]).toEqual([1, 'Username already in use']);
    const embedded = await runCli(
      ['create-bot', '--realm', 'acme', '--owner', 'ann@example.com', '--name', 'X Y', '--short-name', 'x', '--type', 'embedded'],
      instance.env,
    );
    expect([embedded.code, lastLine(embedded.stderr)]).toEqual([1, "Unknown bot type 'embedded' (generic, incoming or outgoing)"]);

    const list = await runCli(['list-bots', '--realm', 'acme'], instance.env);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(
      `id\temail\ttype\towner\tstatus\tapi_key\n${m![1]}\tdeploy-bot@acme.localhost\tincoming\tann@example.com\tactive\t${m![2]}\n`,
    );
  });
});
