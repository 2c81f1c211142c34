// First: V8 flags that must hold before the server allocates anything (ADR 0025).
import './runtime-flags';
import { loadConfig } from './config';
import { hostPort, listenerUrl } from './config/checks';
import { DEMO_PASSWORD, ensureDemoOrganization } from './cli/demo';
import { writeZuliprc } from './cli/zuliprc';
import { realmUrl } from './domain/realm-address';
import { createLogger } from './logger';
import { listen, startContext } from './server';
import { RequestTracker, shutDown } from './shutdown';
import { startUploadSweep } from './actions/uploads';
import { startRetentionArchiver } from './actions/retention';
import { startInvalidationPoll } from './cache/remote';
import { DEFAULT_SCHEDULER_OPTIONS, startScheduledDelivery } from './actions/scheduled-delivery';
import { DEFAULT_SOFT_DEACTIVATION_OPTIONS, startSoftDeactivation } from './actions/soft-deactivation';
import { DEFAULT_MISSED_MESSAGE_WORKER_OPTIONS, startMissedMessageEmails } from './actions/missed-message-emails';
import { emailDeliveryOptions, startEmailDelivery } from './actions/email-delivery';
import { createMailTransport } from './mail/transport';
import { listenFailure, startupFailureLine } from './startup-errors';
import { keepWritesFromBlockingExit } from './stdio';
import { startIdleCollection } from './idle-collection';

/**
 * Process entry: configuration, database (migrated), demo organization when
 * the database is empty, then listen. Writes DATA_DIR/zuliprc (the owner's
 * credentials) so a Zulip client or library can connect at once, and prints
 * the API key only when it was just created: stdout goes to journals and
 * container logs, which must not collect keys on every restart.
 */
async function main(): Promise<void> {
  keepWritesFromBlockingExit();
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const ctx = await startContext(config, log);
  const demo = await ensureDemoOrganization(ctx);
  // prom-client is loaded only where metrics are served (METRICS_PORT).
  const metrics = config.metricsPort === null ? null : new (await import('./metrics')).Metrics(ctx);
  const server = await listen(ctx, log, metrics);
  const tracker = new RequestTracker(server);
  const metricsServer = metrics
    ? await metrics.listen(config.metricsHost, config.metricsPort!).catch((err: unknown) => {
        throw listenFailure(err, 'METRICS_PORT', config.metricsHost, config.metricsPort!);
      })
    : null;
  const emailGateway =
    config.emailGatewayPort === null
      ? null
      : // Imported only when enabled: its SMTP server, MIME parser and HTML-to-Markdown
        // converter are about 5 MiB of an idle process's heap (docs/deployment.md).
        await (await import('./gateway/listener')).startEmailGateway(ctx, log).catch((err: unknown) => {
          throw listenFailure(err, 'EMAIL_GATEWAY_PORT', config.emailGatewayHost, config.emailGatewayPort!);
        });
  const stopSweep = startUploadSweep(ctx, (err) => log.error({ err }, 'unclaimed upload sweep failed'));
  const stopRetention = startRetentionArchiver(
    ctx,
    (err) => log.error({ err }, 'retention archiving failed'),
    (run) => {
      if (run.archived > 0 || run.interrupted) log.info({ ...run }, 'retention archiving');
    },
  );
  const stopCachePoll = startInvalidationPoll(ctx.db, ctx.caches, config.cachePollMs, (err) =>
    log.warn({ err }, 'reading cache invalidations failed'),
  );
  // Scheduled messages and reminders: one process of a cluster delivers (a lease), on time.
  const stopScheduler = startScheduledDelivery(ctx, {
    ...DEFAULT_SCHEDULER_OPTIONS,
    onError: (err) => log.error({ err }, 'scheduled delivery failed'),
    onFailed: (row, reason) => log.info({ scheduled_message_id: row.id, reason }, 'scheduled message not sent'),
  });
  // Soft deactivation (ADR 0058): the daily job and the catch-ups' second passes, one process of a cluster (a lease).
  const stopSoftDeactivation = startSoftDeactivation(ctx, {
    ...DEFAULT_SOFT_DEACTIVATION_OPTIONS,
    days: config.softDeactivationDays,
    onError: (err) => log.error({ err }, 'soft deactivation failed'),
    onDeactivated: (count) => log.info({ users: count }, 'soft deactivation: users went idle'),
  });
  // Missed-message emails: one process of a cluster mails the batches that fall due (a lease).
  const stopMissedMessageEmails = startMissedMessageEmails(ctx, {
    ...DEFAULT_MISSED_MESSAGE_WORKER_OPTIONS,
    onError: (err) => log.error({ err }, 'missed-message emails failed'),
  });
  // Queued mail (src/actions/email-delivery.ts): sent by one process of a cluster (a lease), at once.
  const mailTransport = createMailTransport(config);
  const stopMail = startEmailDelivery(ctx, mailTransport, {
    ...emailDeliveryOptions(config),
    onError: (err) => log.error({ err }, 'mail delivery failed'),
    onSent: (row, sent) => log.info({ email_id: row.id, template: row.template, response: sent.response }, 'mail sent'),
    onRetry: (row, failure, at) =>
      log.warn(
        { email_id: row.id, attempt: row.attempts, error: failure.message, retry_at: new Date(at).toISOString() },
        'mail not sent, will retry',
      ),
    onFailed: (row, reason) =>
      log.error({ email_id: row.id, template: row.template, to: row.to_address, error: reason }, 'mail not sent, given up'),
  });
  // Gives back the young generation an idle process keeps after start and after bursts.
  const idleCollection =
    config.idleCollectSeconds > 0
      ? startIdleCollection(server, config.idleCollectSeconds * 1000, (c) =>
          log.debug(
            {
              young_before_mib: +(c.youngBefore / 1048576).toFixed(1),
              young_after_mib: +(c.youngAfter / 1048576).toFixed(1),
              heap_used_mib: +(c.heapUsed / 1048576).toFixed(1),
              pause_ms: Math.round(c.pauseMs),
            },
            'idle: heap collected',
          ),
        )
      : null;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // PORT=0 picks a free port: the address clients use is known only now.
  if (config.port === 0 && !process.env.EXTERNAL_URL) config.externalUrl = listenerUrl(config.host, port);
  const site = realmUrl(config.externalUrl, demo.realmStringId);
  const owner = demo.owner;
  const zuliprc = owner ? writeZuliprc(config.dataDir, 'zuliprc', owner.email, owner.api_key, site) : null;
  const lines = [
    `Parley is listening on http://${hostPort(config.host, port)} (${config.databaseUrl ? 'MySQL' : 'SQLite'})`,
    demo.created ? 'Created the demo organization.' : 'Using the existing organization.',
    `Site:          ${site} (API reference: ${site}/api/docs)`,
    `Mail:          ${mailTransport.description}, from ${config.noreplyEmailAddress}`,
  ];
  const metricsAddress = metricsServer?.address();
  if (metricsAddress && typeof metricsAddress === 'object') {
    lines.push(`Metrics:       http://${config.metricsHost}:${metricsAddress.port}/metrics`);
  }
  if (emailGateway) {
    lines.push(`Email gateway: smtp://${hostPort(config.emailGatewayHost, emailGateway.port)} (${config.emailGatewayPattern})`);
  }
  if (owner && demo.created) {
    // The demo people share one password (src/cli/demo.ts): the web client at the site's
    // address is open to each of them, so a second browser can chat with the first.
    lines.push(`Web app:       ${site}/ — log in as ${owner.email} (or max@example.com, mia@example.com, …), password ${DEMO_PASSWORD}`);
    lines.push(`Owner email:   ${owner.email}`, `Owner API key: ${owner.api_key}`, `zuliprc:       ${zuliprc}`);
    lines.push(`Try: curl -u ${owner.email}:${owner.api_key} ${site}/api/v1/users/me`);
    lines.push('The API key is shown this once; the zuliprc keeps it.');
  } else if (owner) {
    lines.push(`Owner email:   ${owner.email}`, `zuliprc:       ${zuliprc} (the owner's API key)`);
  }
  // The handlers before the lines that say the server is ready: a signal sent as soon as they
  // are read (a supervisor, a test) would otherwise find Node's default, and end the process
  // on the spot instead of stopping it (seen on a loaded machine).
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return; // a second signal changes nothing: the stop is already bounded by SHUTDOWN_TIMEOUT_MS
    stopping = true;
    log.info({ signal }, 'signal received');
    shutDown({
      ctx,
      log,
      server,
      tracker,
      metricsServer,
      emailGateway,
      stopTimers: async () => {
        stopSweep();
        stopCachePoll();
        idleCollection?.stop();
        await Promise.all([stopRetention(), stopScheduler(), stopSoftDeactivation(), stopMissedMessageEmails(), stopMail()]);
        mailTransport.close();
      },
      timeoutMs: config.shutdownTimeoutMs,
    }).then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err) => {
  // A refused setting, a database that does not answer, a port in use: the operator's
  // to fix, so one line naming the cause (src/startup-errors.ts), no stack trace.
  process.stderr.write(`${startupFailureLine(err, process.env.LOG_LEVEL)}\n`);
  process.exit(1);
});
