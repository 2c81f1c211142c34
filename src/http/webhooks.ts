import { Readable } from 'node:stream';
import busboy from 'busboy';
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { ApiError, MissingArgumentError } from '../errors';
import { incomingWebhook } from '../handlers/webhooks';
import { integrationNamed } from '../integrations';
import type { WebhookRequest } from '../integrations/run';
import { authenticateApiKey, authenticateBasic } from './auth';
import { FORM_FIELDS, malformed, multipartEncodingRefused, tooLarge, unsupportedCharset, unsupportedEncoding } from './body';
import { consumeCallerLimit, responseRateLimitNotes } from './caller-limits';
import { sendJson } from './pipeline';

/** A service's body may hold this much (GitHub caps its payloads at 25 MB; Zulip's nginx at 25 MiB for uploads only). */
const BODY_BYTES = 5 * 1024 * 1024;
/** Incoming webhooks are what an incoming-webhook bot's key is for (every other operation but sending refuses it). */
const INCOMING_BOTS_WELCOME = { allowIncomingWebhooks: true };

/**
 * Incoming webhooks, `POST /api/v1/external/{integration_name}` (contract:
 * openapi/paths/external.yaml). A router of its own, ahead of the API
 * pipeline (ADR 0046): the body is the service's payload, not Zulip
 * parameters — JSON whatever its Content-Type claims, or form fields for
 * the integrations that take them — so it is read raw, bounded, and handed
 * to the integration as sent. The steps are the pipeline's, in its order:
 * route (404 before anything else), body, authentication (`api_key` in
 * the query string or a form field, or HTTP Basic), the caller's rate
 * limit, then the integration and the sends.
 */
export function webhookRouter(ctx: AppContext): Router {
  const router = Router();
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.operationId = 'incoming-webhook';
      // The path's one segment, decoded here: a malformed escape names no integration.
      const integration = /^\/[^/]+$/.test(req.path) ? integrationNamed(decodeSegment(req.path.slice(1))) : undefined;
      if (!integration) throw new ApiError('Endpoint does not exist', 'BAD_REQUEST', 404);
      if (req.method !== 'POST') {
        throw new ApiError('Method Not Allowed', 'METHOD_NOT_ALLOWED', 405, { allowed_methods: ['POST'] }, { Allow: 'POST' });
      }
      const request = await readWebhookRequest(req);
      const apiKey = request.query.api_key ?? request.form?.api_key;
      const caller =
        apiKey !== undefined
          ? await authenticateApiKey(ctx.caches, apiKey, null, req.headers.host, ctx.config.externalUrl, INCOMING_BOTS_WELCOME)
          : req.headers.authorization !== undefined
            ? await authenticateBasic(
                ctx.caches,
                req.headers.authorization,
                req.headers.host,
                ctx.config.externalUrl,
                INCOMING_BOTS_WELCOME,
              )
            : null;
      if (!caller) throw new MissingArgumentError('api_key');
      await consumeCallerLimit(ctx, req, caller.user, responseRateLimitNotes(res));
      const answer = await incomingWebhook(ctx, caller, integration, request);
      if (ctx.bus.flushed) await ctx.bus.flushed();
      const body =
        answer.kind === 'posted'
          ? { result: 'success', msg: '' }
          : {
              result: 'error',
              msg: `The '${answer.eventType}' event isn't currently supported by the ${answer.webhookName} webhook; ignoring`,
              code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE',
              webhook_name: answer.webhookName,
              event_type: answer.eventType,
            };
      // As the pipeline answers (./pipeline.ts sendJson), through res.json only when responses are validated.
      if (ctx.config.validateResponses) res.status(200).json(body);
      else sendJson(res, body);
    } catch (e) {
      next(e);
    }
  });
  return router;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

/** The request as the integration sees it: the raw body, its form fields if it is a form, headers and query. */
async function readWebhookRequest(req: Request): Promise<WebhookRequest> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  // No service compresses its webhook bodies; refused in the API pipeline's words.
  if (req.headers['content-encoding'] !== undefined && req.headers['content-encoding'] !== 'identity') {
    throw type.startsWith('multipart/') ? multipartEncodingRefused() : unsupportedEncoding();
  }
  // Text is read as UTF-8 (JSON's only encoding); a body declaring another charset is refused as the API's are.
  const charset = /;\s*charset="?([^";\s]+)/.exec(type)?.[1];
  if (charset !== undefined && !/^(utf-?8|us-ascii)$/.test(charset)) {
    throw unsupportedCharset(charset);
  }
  const raw = await readBody(req);
  let form: Record<string, string> | null = null;
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const params = new URLSearchParams(raw.toString('utf8'));
    if ([...params.keys()].length > FORM_FIELDS) throw tooLarge();
    form = firstValues(params);
  } else if (type.startsWith('multipart/form-data')) form = await multipartFields(req, raw);
  const query = firstValues(new URL(req.originalUrl, 'http://localhost').searchParams);
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return { rawBody: raw.toString('utf8'), form, headers, query };
}

/** Zulip reads one value per name; the first, as Django's QueryDict.get gives the last — services send each once. */
function firstValues(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of params) if (!(k in out)) out[k] = v;
  return out;
}

function readBody(req: Request): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_BYTES) chunks.push(chunk);
      else {
        req.off('data', onData);
        req.resume();
        reject(tooLarge());
      }
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** A multipart body's text fields (files are read and dropped: no integration takes one). */
function multipartFields(req: Request, raw: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = Object.create(null);
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fields: FORM_FIELDS, fieldSize: BODY_BYTES } });
    } catch {
      reject(malformed());
      return;
    }
    parser.on('field', (name, value) => {
      if (!(name in fields)) fields[name] = value;
    });
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('fieldsLimit', () => reject(tooLarge()));
    parser.on('error', () => reject(malformed()));
    parser.on('close', () => resolve(fields));
    Readable.from([raw]).pipe(parser);
  });
}
