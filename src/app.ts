import { randomUUID } from 'node:crypto';
import express, { Express } from 'express';
import pino, { Logger } from 'pino';
import pinoHttp from 'pino-http';
import type { AppContext } from './context';
import { bounded } from './domain/bounded';
import { ApiError } from './errors';
import { errorMiddleware } from './http/errors';
import type { HandlerTable } from './http/handler';
import { docsPageRouter } from './http/docs-page';
import { fileRouter } from './http/files';
import { avatarFileRouter } from './http/avatar-files';
import { emojiFileRouter } from './http/emoji-files';
import { emojiDataRouter } from './http/emoji-data';
import { emojiCodeToNames } from './markdown/emoji';
import { apiRouter } from './http/pipeline';
import { tusRouter } from './http/tus';
import { webhookRouter } from './http/webhooks';
import { integrationsPageRouter } from './http/integrations-page';
import { HANDLERS } from './http/routes';
import { servedContractRouter } from './http/served-contract';
import { signupPagesRouter } from './http/signup-pages';
import { sitePagesRouter } from './http/site-pages';
import { passwordResetPagesRouter } from './http/password-reset-pages';
import { loginPageRouter } from './http/login-page';
import { webAppRouter } from './http/web-app';
import { usesSession } from './http/auth';
import { unsubscribeRouter } from './http/unsubscribe';
import { doUnsubscribe } from './actions/unsubscribe';
import { scopeIfAny } from './http/scope';
import type { SpecIndex } from './http/spec';
import { checkHealth } from './actions/health';
import { redactUrl } from './logger';
import type { Metrics } from './metrics';

export interface AppDeps {
  ctx: AppContext;
  spec: SpecIndex;
  log?: Logger;
  handlers?: HandlerTable;
  /** Counts and times every request when metrics are served (METRICS_PORT). */
  metrics?: Metrics | null;
}

/** The Express application, without listening: main.ts, jest and dredd all build it here. */
export function buildApp({ ctx, spec, log = pino({ level: 'silent' }), handlers = HANDLERS, metrics = null }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip: the socket's address, or the one a trusted proxy forwarded (TRUSTED_PROXIES).
  app.set('trust proxy', ctx.config.trustedProxies.length ? ctx.config.trustedProxies : false);
  // Every response names its request, so a client's report of a failure can be
  // matched to the server's log line.
  app.use((_req, res, next) => {
    res.setHeader('X-Request-Id', randomUUID());
    next();
  });
  // The access log (one line per request) exists at level info and below; above it pino-http
  // would still build a child logger per request (8% of a small request's CPU).
  if (log.isLevelEnabled('info')) {
    const accessLog = pinoHttp({
      logger: log,
      quietReqLogger: true,
      genReqId: (_req, res) => String(res.getHeader('X-Request-Id')),
      // A failed request is logged once, with its details, by the error middleware.
      customLogLevel: () => 'info',
      // Read when the response ends: by then the pipeline knows the operation and the caller.
      customSuccessObject: (_req, res, line: object) => ({ ...line, ...requestFacts(res as express.Response) }),
      customErrorObject: (_req, res, _err, line: object) => ({ ...line, ...requestFacts(res as express.Response) }),
      customAttributeKeys: { responseTime: 'durationMs' },
      // Never the Authorization header (an API key) or a body; the URL bounded, secrets in its query replaced.
      // The request id is the line's reqId and the status its `status`: neither is said twice.
      serializers: {
        req: (r: { method: string; url: string }) => ({ method: r.method, url: bounded(redactUrl(r.url), 300) }),
        res: () => undefined,
      },
    });
    // Not the long-polls that succeed: every client has one open all day, returned at each
    // event, and with thousands of them the access log was a quarter of the fan-out's CPU (a
    // send to an organization's announcement channel, bench/announce.ts). A failed poll gets
    // its line, as any failed request.
    app.use((req, res, next) => {
      if (!isEventsPoll(req)) return accessLog(req, res, next);
      const started = performance.now();
      res.once('finish', () => {
        if (res.statusCode < 400) return;
        const req_ = { method: req.method, url: bounded(redactUrl(req.originalUrl), 300) };
        log.info(
          { reqId: res.getHeader('X-Request-Id'), req: req_, durationMs: Math.round(performance.now() - started), ...requestFacts(res) },
          // pino-http's wording; a server error's details are the error middleware's line.
          res.statusCode >= 500 ? 'request errored' : 'request completed',
        );
      });
      next();
    });
  }
  if (metrics) app.use(metrics.middleware());
  // Zulip's health check is outside the API, where load balancers probe it; the contract's
  // GET /api/v1/health (src/handlers/health.ts) gives the same answer.
  app.get('/health', async (_req, res) => {
    res.locals.operationId = 'get-health';
    res.json({ result: 'success', msg: '', ...(await checkHealth(ctx)) });
  });
  // Zulip serves GET /avatar/{user_id_or_email}[/medium] at the site root too, with API
  // authentication: clients build those URLs from the organization's address. Such a
  // request is the same operation under /api/v1, and goes through the API pipeline as
  // one (validation, logs and metrics see the canonical path).
  // A browser loading such an image carries the web client's session cookie and no
  // Authorization header: that request is the operation under /json, which takes the session.
  app.use((req, _res, next) => {
    if (req.path.startsWith('/avatar/')) {
      const prefix = usesSession(req.headers) ? '/json' : '/api/v1';
      req.url = `${prefix}${req.url}`;
      req.originalUrl = `${prefix}${req.originalUrl}`;
    }
    next();
  });
  // Resumable uploads speak tus, not the API's form bodies: before the API pipeline.
  app.use('/api/v1/tus', tusRouter(ctx));
  // Incoming webhooks carry a service's own payload, not the API's form bodies (ADR 0046).
  app.use('/api/v1/external', webhookRouter(ctx));
  // The contract itself and its browsable reference, without authentication:
  // before the API pipeline and its 404, as neither is an operation of openapi/.
  app.use('/api/v1', servedContractRouter());
  app.use('/api/docs/integrations', integrationsPageRouter());
  app.use('/api/docs', docsPageRouter());
  app.use('/api/v1', apiRouter(ctx, spec, handlers));
  // The web client's path to the same operations, as Zulip's /json: the same pipeline,
  // authenticated by the browser session's cookie and its CSRF token (ADR 0053). A path
  // that is no operation gets the pipeline's JSON 404, never the HTML pages below.
  app.use('/json', apiRouter(ctx, spec, handlers, 'session'));
  // Uploaded files, where message HTML links them (outside /api/v1, as Zulip).
  app.use('/user_uploads', fileRouter(ctx));
  // Custom emoji images, public as in Zulip.
  app.use('/user_avatars', emojiFileRouter(ctx));
  // Uploaded avatars, public as in Zulip.
  app.use('/user_avatars', avatarFileRouter(ctx));
  // The Unicode emoji names, where POST /register's server_emoji_data_url points.
  app.use(emojiDataRouter(emojiCodeToNames));
  app.use('/api', (_req, _res, next) => next(new ApiError('Endpoint does not exist', 'BAD_REQUEST', 404)));
  // The login page (and logout), the "forgot password" form and the pages of its mailed links.
  app.use(loginPageRouter(ctx));
  app.use(passwordResetPagesRouter(ctx));
  // The one-click unsubscribe links of mails (missed messages, …).
  app.use(unsubscribeRouter((kind, token) => doUnsubscribe(ctx, kind, token)));
  // The sign-up pages of invitations, then `/` and a 404 page for any other path, in HTML for a browser.
  app.use(signupPagesRouter(ctx));
  // The web client at `/` (with a session) and its built files; without a build, `/` is the site page below.
  app.use(webAppRouter(ctx));
  app.use(sitePagesRouter(ctx.db, ctx.config));
  app.use(errorMiddleware(log));
  return app;
}

/**
 * What the access log line says about a request once it is answered: its
 * operation and caller, and for an error the `code` and `msg` its body gave
 * (src/http/errors.ts keeps them), so the line alone explains a 4xx.
 */
function requestFacts(res: express.Response): {
  operationId: string | null;
  userId: number | null;
  status: number;
  error?: { code: string; msg: string };
} {
  const scope = scopeIfAny(res);
  const error = res.locals?.error as { code: string; msg: string } | undefined;
  return {
    operationId: typeof res.locals?.operationId === 'string' ? res.locals.operationId : null,
    userId: scope?.caller?.user.id ?? null,
    status: res.statusCode,
    ...(error ? { error } : {}),
  };
}

/** GET /api/v1/events or /json/events: a long-poll. */
function isEventsPoll(req: express.Request): boolean {
  return req.method === 'GET' && (req.path === '/api/v1/events' || req.path === '/json/events');
}
