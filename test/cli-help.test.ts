import { SETTINGS } from '../src/config';
import { runCli } from './support/cli';

describe('the command line --help', () => {
  it('lists every setting the CLI reads (src/config/settings.ts), with its default, and exits 0', async () => {
    const res = await runCli(['--help'], { DATA_DIR: '/nonexistent' });
    expect([res.code, res.stderr]).toEqual([0, '']);
    const settings = res.stdout.slice(res.stdout.indexOf('\nSettings:'));
    const listed = [...settings.matchAll(/^ {2}([A-Z][A-Z0-9_]+)(?:=(\S*))? +\S/gm)].map((m) => [m[1], m[2] ?? null]);
    const expected = Object.entries(SETTINGS).map(([name, s]) => [name, 'default' in s ? s.default : null]);
    expect(listed).toEqual(expected);
  });

  it('an unknown command is refused with the usage, exit status 2, before any database is opened', async () => {
    const res = await runCli(['create-organization'], { DATA_DIR: '/nonexistent' });
    expect(res.code).toBe(2);
    expect(res.stderr.split('\n')[0]).toBe("Unknown command 'create-organization'.");
    expect(res.stderr).toContain('Settings:');
  });
});
