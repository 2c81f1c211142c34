import pino from 'pino';
import { loadConfig } from './config';
import { ensureDemoOrganization } from './cli/demo';
import { writeZuliprc } from './cli/zuliprc';
import { listen, startContext } from './server';
import { startUploadSweep } from './actions/uploads';

/**
 * Process entry: configuration, database (migrated), demo organization when
 * the database is empty, then listen. Prints the owner's credentials and
 * writes DATA_DIR/zuliprc so a Zulip client or library can connect at once.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });
  const ctx = await startContext(config);
  const demo = await ensureDemoOrganization(ctx);
  const server = await listen(ctx, log);
  const stopSweep = startUploadSweep(ctx, (err) => log.error({ err }, 'unclaimed upload sweep failed'));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // PORT=0 picks a free port: the address clients use is known only now.
  if (config.port === 0 && !process.env.EXTERNAL_URL) config.externalUrl = `http://${config.host}:${port}`;
  const site = config.externalUrl;
  const owner = demo.owner;
  const zuliprc = owner ? writeZuliprc(config.dataDir, 'zuliprc', owner.email, owner.api_key, site) : null;
  const lines = [
    `Parley is listening on http://${config.host}:${port} (${config.databaseUrl ? 'MySQL' : 'SQLite'})`,
    demo.created ? 'Created the demo organization.' : 'Using the existing organization.',
  ];
  if (owner) {
    lines.push(`Owner email:   ${owner.email}`, `Owner API key: ${owner.api_key}`, `zuliprc:       ${zuliprc}`);
    lines.push(`Try: curl -u ${owner.email}:${owner.api_key} ${site}/api/v1/users/me`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  const stop = async () => {
    ctx.queues.close(); // answers the open long-polls and clears the queue timers
    ctx.push?.stop(); // notifications not yet delivered are dropped with the process
    stopSweep();
    server.close();
    await ctx.db.destroy();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`Parley failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
