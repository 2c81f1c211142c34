import { eachDatabase } from './support/databases';
import { lastLine, runCli } from './support/cli';
import { newInstance, type Instance } from './support/instances';

/** soft-deactivate as an operator runs it: a process of its own on the test's database. */
eachDatabase('the command line: soft-deactivate', (dialect) => {
  let instance: Instance;
  beforeAll(async () => {
    instance = await newInstance(dialect);
    expect((await runCli(['create-realm', '--string-id', 'acme', '--name', 'Acme'], instance.env)).code).toBe(0);
    for (const who of ['ann', 'bob']) {
      const made = await runCli(['create-user', '--realm', 'acme', '--email', `${who}@example.com`, '--name', who], instance.env);
      expect(made.code).toBe(0);
    }
  });
  afterAll(() => instance.drop());

  const idle = async (email: string) => {
    const db = instance.open();
    return Boolean((await db('users').where({ email_key: email }).first('long_term_idle'))!.long_term_idle);
  };

  it('marks named users idle, brings them back with --activate, and runs the daily job with --inactive-for', async () => {
    const marked = await runCli(['soft-deactivate', '--realm', 'acme', 'ann@example.com'], instance.env);
    expect([marked.code, marked.stdout]).toEqual([0, '1 user(s) went idle.\n']);
    expect([await idle('ann@example.com'), await idle('bob@example.com')]).toEqual([true, false]);
    const back = await runCli(['soft-deactivate', '--realm', 'acme', '--activate', 'ann@example.com'], instance.env);
    expect([back.code, back.stdout]).toEqual([0, '1 user(s) caught up and active again.\n']);
    expect(await idle('ann@example.com')).toBe(false);
    // New users have no recorded visit: the job never takes them.
    const job = await runCli(['soft-deactivate', '--realm', 'acme', '--inactive-for', '0'], instance.env);
    expect([job.code, job.stdout]).toEqual([0, '0 user(s) went idle.\n']);
    const db = instance.open();
    await db('users')
      .where({ email_key: 'bob@example.com' })
      .update({ last_visit_time: Math.floor(Date.now() / 1000) - 3 * 86_400 });
    const taken = await runCli(['soft-deactivate', '--realm', 'acme', '--inactive-for', '1'], instance.env);
    expect([taken.code, taken.stdout]).toEqual([0, '1 user(s) went idle.\n']);
    expect(await idle('bob@example.com')).toBe(true);
    const bad = await runCli(['soft-deactivate', '--realm', 'acme', '--inactive-for', 'soon'], instance.env);
    expect([bad.code, lastLine(bad.stderr)]).toEqual([1, "--inactive-for must be a whole number of days, not 'soon'"]);
    const nobody = await runCli(['soft-deactivate', '--realm', 'acme', 'zed@example.com'], instance.env);
    expect([nobody.code, lastLine(nobody.stderr)]).toEqual([1, 'No user zed@example.com in that organization']);
  });
});
