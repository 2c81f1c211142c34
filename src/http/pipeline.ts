import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../context';
import { ApiError, NotImplementedError } from '../errors';
import { uploadRulesFor } from './upload-rules';
import { authenticateBasic, authenticateSession } from './auth';
import { csrfRefusal, SAFE_METHODS } from '../domain/sessions';
import { bodyParsers, FORM_FIELDS, receiveUploads } from './body';
import { RESPONDED, type Handler, type HandlerTable, type OpId, type Params } from './handler';
import { normalizeParams } from './params';
import { matchRoute, type SpecIndex } from './spec';
import { checkJsonQueryAsSent, requestValidator } from './validation';
import { consumeCallerLimit, responseRateLimitNotes } from './caller-limits';
import { openScope, scopeIfAny, scopeOf, type RequestScope } from './scope';
import { logIn } from './session-cookies';
import { encodeReply } from '../serializers/encoded-json';
import { replyBytes } from './kept-gzip';
import { doNoteVisit } from '../actions/soft-deactivation';

/** Form bodies may hold this much (after decompression); Zulip's nginx allows far more for uploads only. */
const FORM_BYTES = 5 * 1024 * 1024;

/**
 * How a pipeline authenticates: `api` (/api/v1) by HTTP Basic and an API
 * key; `session` (/json, the web client's, as Zulip's) by the browser
 * session's cookie alone, with the session's CSRF token on every unsafe
 * method (ADR 0053).
 */
export type AuthMode = 'api' | 'session';

/**
 * The /api/v1 (and /json) request pipeline, one pass in this order: route match (404/405
 * before the body is read and before authentication, as Zulip) → body
 * parsing → parameter normalisation → authentication → validation → handler
 * → success envelope. Errors from any step reach the one error middleware in
 * app.ts. What a step learns about the request goes into its scope
 * (./scope.ts); the handler gets it as parameters (its `Call`).
 */
export function apiRouter(ctx: AppContext, spec: SpecIndex, handlers: HandlerTable, mode: AuthMode = 'api'): Router {
  const router = Router();

  router.use((req: Request, res: Response, next: NextFunction) => {
    const match = matchRoute(spec, req.path, req.method);
    // An operation with a router of its own (incoming webhooks at /api/v1/external, ./webhooks.ts)
    // reaches the pipeline only under /json, where a browser session must not call it.
    if (match.kind === 'operation' && match.info.ownRouter) {
      throw new ApiError('Endpoint does not exist', 'BAD_REQUEST', 404);
    }
    if (match.kind === 'not-found') {
      throw new ApiError('Endpoint does not exist', 'BAD_REQUEST', 404);
    }
    if (match.kind === 'method-not-allowed') {
      throw new ApiError(
        'Method Not Allowed',
        'METHOD_NOT_ALLOWED',
        405,
        { allowed_methods: match.allowed },
        {
          Allow: match.allowed.join(', '),
        },
      );
    }
    if (match.kind === 'bad-path-parameter') throw new ApiError(`Invalid ${match.name}`);
    const scope = openScope(res, match.info, match.pathParams, responseRateLimitNotes(res));
    // For the access log and the metrics (src/http/errors.ts, src/metrics.ts), which also see requests outside the API.
    res.locals.operationId = match.info.operationId;
    if (match.info.acceptsFiles && req.is('multipart/form-data')) {
      // Its body is read after authentication, streaming into storage (receiveUploads below).
      scope.deferUploads = true;
      req.body = Object.create(null);
    } else if (match.info.acceptsFiles && !match.info.filesOptional) {
      // A form or empty body to the upload endpoint carries no file: Zulip answers that
      // (after authentication) with the same 400 as a multipart body without a file part,
      // not with the validator's content-type refusal.
      scope.noFilePart = true;
    }
    next();
  });

  const limits = {
    formBytes: FORM_BYTES,
    formFields: FORM_FIELDS,
    fileBytes: ctx.config.maxFileUploadSizeMib * 1024 * 1024,
    files: 10,
  };
  router.use(bodyParsers(limits));

  router.use((req: Request, res: Response, next: NextFunction) => {
    const s = scopeOf(res);
    // An upload's parameters are normalised once its body has been read (below).
    if (!s.deferUploads) normalizeParams(req, s);
    next();
  });

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const s = scopeOf(res);
    if (s.info.authenticated && mode === 'session') {
      const { caller, session } = await authenticateSession(
        ctx.db,
        ctx.caches,
        req.headers.cookie,
        req.headers.host,
        ctx.config.externalUrl,
      );
      // Zulip's CSRF middleware: an unsafe method needs the token the page read from the
      // csrftoken cookie, sent back in X-CSRFToken, which another site's page cannot read.
      if (!SAFE_METHODS.has(req.method)) {
        const sent = req.headers['x-csrftoken'];
        const reason = csrfRefusal(Array.isArray(sent) ? sent[0] : sent, session.csrf_token, 'header');
        if (reason !== null) throw new ApiError(`CSRF error: ${reason}`, 'CSRF_FAILED', 403, { reason });
      }
      s.caller = caller;
      s.sessionId = session.id;
    } else if (s.info.authenticated) {
      s.caller = await authenticateBasic(ctx.caches, req.headers.authorization, req.headers.host, ctx.config.externalUrl, {
        allowIncomingWebhooks: s.info.allowIncomingWebhooks,
      });
    }
    // The visit (when users go idle), and an idle caller's catch-up before anything reads their rows (ADR 0058).
    if (s.caller) await doNoteVisit(ctx, s.caller.user);
    if (s.noFilePart) throw uploadRulesFor(s.info.operationId, ctx.config.maxFileUploadSizeMib).noFile();
    next();
  });

  // Zulip's limits (./caller-limits.ts): a request over them is refused before validation,
  // whatever it carries.
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const s = scopeOf(res);
    await consumeCallerLimit(ctx, req, s.caller?.user ?? null, s.limits);
    next();
  });

  // An upload's body is read here, after authentication and the rate limits, and before
  // validation: the text fields beside the file are parameters like any body's (Django
  // reads them so), normalised and validated as the fields of any other body.
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const s = scopeOf(res);
    if (s.deferUploads) {
      const rules = uploadRulesFor(s.info.operationId, ctx.config.maxFileUploadSizeMib);
      const received = await receiveUploads(req, res, ctx.storage, { ...limits, ...rules });
      s.receivedFiles = received.files;
      req.body = received.fields;
      normalizeParams(req, s);
    }
    next();
  });

  router.use(requestValidator(spec.document, ctx.config.validateResponses));

  router.use(async (req: Request, res: Response) => {
    const s = scopeOf(res);
    const files = s.receivedFiles;
    try {
      await runHandler(req, res, s);
    } finally {
      // Files the handler did not publish are dropped (aborting a published one does nothing).
      if (files.length) await Promise.allSettled(files.map((f) => f.file.abort()));
    }
  });

  // A request refused after its files were stored (a parameter the validator refuses, a
  // handler's error) leaves nothing behind: the answer waits for the deletions.
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    const files = scopeIfAny(res)?.receivedFiles ?? [];
    if (files.length === 0) return next(err);
    void Promise.allSettled(files.map((f) => f.file.abort())).then(() => next(err));
  });

  async function runHandler(req: Request, res: Response, s: RequestScope): Promise<void> {
    const handler = handlers[s.info.operationId as OpId] as Handler<OpId> | undefined;
    if (!handler) throw new NotImplementedError(s.info.operationId);
    const params: Record<string, unknown> = { ...(req.query as object), ...(req.body as object), ...coercePathParams(s) };
    for (const [name, value] of Object.entries(params)) checkNumbersInRange(value, name);
    checkJsonQueryAsSent(s.info, s.jsonQueryAsSent);
    const data = await handler({
      ctx,
      caller: s.caller,
      sessionId: s.sessionId,
      renewSession: async () => {
        if (s.caller && s.sessionId !== null) await logIn(ctx, req, res, s.caller.user);
      },
      params: validated(params),
      sent: s.sentParams,
      files: s.receivedFiles,
      req,
      res,
      limits: s.limits,
    });
    if (data === RESPONDED) return;
    // With the Redis bus, a request is answered once its events are in Redis (every node will see them).
    if (ctx.bus.flushed) await ctx.bus.flushed();
    const ignored = s.ignoredParameters;
    const body = {
      result: 'success',
      msg: '',
      ...(data as object),
      ...(ignored.length ? { ignored_parameters_unsupported: ignored } : {}),
    };
    // The response validator (VALIDATE_RESPONSES: dredd's server and the wiring tests turn it
    // on; jest checks responses in its client instead) checks what passes through res.json.
    // Otherwise the body is written directly: Express's res.send adds charset parsing, a
    // Buffer copy and freshness checks that no API response needs (a tenth of a long-poll
    // answer's CPU, when 10,000 are written at once).
    // Encoded parts (src/serializers/encoded-json.ts) are spliced into the text; the validator
    // reads objects, so it gets the text decoded — what a client would.
    if (ctx.config.validateResponses) res.json(JSON.parse(encodeReply(body).toString('utf8')));
    else sendJson(res, body);
  }
  return router;
}

/**
 * Every integer the contract admits has a range the validator checks, but the
 * validator's coercion turns text of hundreds of digits (a path or query
 * parameter) into Infinity, which passes a range check. No value that is not
 * a finite, safe number goes further than this.
 */
function checkNumbersInRange(value: unknown, name: string): void {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) {
      throw new ApiError(`${name} is too ${value < 0 ? 'small' : 'large'}`);
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkNumbersInRange(v, `${name}[${i}]`));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) checkNumbersInRange(v, `${name}["${k}"]`);
  }
}

/**
 * Path parameters arrive as text; integer ones become numbers. The validator's
 * integer check coerces as JavaScript's == does, so blank text (" ", U+2028)
 * passes it as 0: only an optional minus and digits are an integer here.
 */
function coercePathParams(s: RequestScope): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(s.pathParams)) {
    if (!s.info.integerPathParams.has(name)) out[name] = value;
    else if (/^-?\d+$/.test(value)) out[name] = Number(value);
    else throw new ApiError(`${name} is not an integer`);
  }
  return out;
}

/**
 * A JSON response as res.json writes it (same type, same bytes), without
 * Express's send. Encoded once, for both its length and its bytes: a text
 * with any character beyond Latin-1 (most languages but English, many
 * emoji) is a two-byte string in V8, and measuring it (Buffer.byteLength)
 * and then encoding it again in the socket write were two slow passes over
 * it (171 µs for one of a 74 KB search page, measured, against 15 µs for a
 * one-byte text of the same length).
 */
export function sendJson(res: Response, body: Record<string, unknown>): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  // A reply around kept bytes (a long topic list) goes gzipped to a client that asks (src/http/kept-gzip.ts).
  const { chunks, gzip } = replyBytes(res.req, res, body);
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  let length = 0;
  for (const c of chunks) length += c.length;
  res.setHeader('Content-Length', length);
  if (res.req.method === 'HEAD') return void res.end();
  // Several chunks (text around kept bytes) go out corked: one write with the headers, as one buffer would.
  if (chunks.length > 1) res.cork();
  for (let i = 0; i < chunks.length - 1; i++) res.write(chunks[i]);
  res.end(chunks[chunks.length - 1]);
}

export type { RequestHandler };

/**
 * The one place the request's type is asserted: path, query and body have
 * passed express-openapi-validator against this operation's schemas (JSON
 * form fields decoded, integers and booleans coerced, defaults applied), so
 * they are the operation's `Params`.
 */
function validated(params: Record<string, unknown>): Params<OpId> {
  return params as Params<OpId>;
}
