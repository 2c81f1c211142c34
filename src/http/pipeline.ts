import express, { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import multer from 'multer';
import type { AppContext } from '../context';
import { ApiError, NotImplementedError } from '../errors';
import { authenticateBasic } from './auth';
import { RESPONDED, type Call, type Handler, type HandlerTable, type OpId } from './handler';
import { normalizeParams } from './params';
import { PREFETCH_VIEWER } from './routes';
import { matchRoute, type OperationInfo, type SpecIndex } from './spec';
import { requestValidator } from './validation';

interface PipelineState {
  info: OperationInfo;
  pathParams: Record<string, string>;
  user: Call<OpId>['user'];
}

const state = (res: Response) => res.locals.pipeline as PipelineState;

/**
 * The /api/v1 request pipeline (DESIGN §2), one pass in this order:
 * body parsing → route match (404/405 before auth, as Zulip) → parameter
 * normalisation → authentication → validation → handler → success envelope.
 * Errors from any step reach the one error middleware in app.ts.
 */
export function apiRouter(ctx: AppContext, spec: SpecIndex, handlers: HandlerTable): Router {
  const router = Router();
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: ctx.config.maxFileUploadSizeMib * 1024 * 1024, files: 10, fields: 1000 },
  });

  router.use(express.urlencoded({ extended: false, limit: '5mb', parameterLimit: 1000 }));
  router.use((req, res, next) => (req.is('multipart/form-data') ? upload.any()(req, res, next) : next()));

  router.use((req: Request, res: Response, next: NextFunction) => {
    const match = matchRoute(spec, req.path, req.method);
    if (match.kind === 'not-found') {
      throw new ApiError('Endpoint does not exist', 'BAD_REQUEST', 404);
    }
    if (match.kind === 'method-not-allowed') {
      throw new ApiError('Method Not Allowed', 'METHOD_NOT_ALLOWED', 405, { allowed_methods: match.allowed }, {
        Allow: match.allowed.join(', '),
      });
    }
    res.locals.pipeline = { info: match.info, pathParams: match.pathParams, user: null } satisfies PipelineState;
    normalizeParams(req, res, match.info);
    next();
  });

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const s = state(res);
    if (s.info.authenticated) {
      const prefetchViewer = PREFETCH_VIEWER.has(s.info.operationId as OpId);
      s.user = await authenticateBasic(ctx.db, req.headers.authorization, req.headers.host, prefetchViewer);
    }
    next();
  });

  for (const mw of requestValidator(spec.document, ctx.config.validateResponses)) router.use(mw);

  router.use(async (req: Request, res: Response) => {
    const s = state(res);
    const handler = handlers[s.info.operationId as OpId] as Handler<OpId> | undefined;
    if (!handler) throw new NotImplementedError(s.info.operationId);
    const params = { ...(req.query as object), ...(req.body as object), ...coercePathParams(s) };
    const data = await handler({ ctx, user: s.user, params: params as never, sent: res.locals.sentParams as Set<string>, req, res });
    if (data === RESPONDED) return;
    const ignored = res.locals.ignoredParameters as string[];
    res.json({
      result: 'success',
      msg: '',
      ...(data as object),
      ...(ignored.length ? { ignored_parameters_unsupported: ignored } : {}),
    });
  });
  return router;
}

/** Path parameters arrive as text; integer ones become numbers (the validator has checked them). */
function coercePathParams(s: PipelineState): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(s.pathParams)) {
    out[name] = s.info.integerPathParams.has(name) && /^-?\d+$/.test(value) ? Number(value) : value;
  }
  return out;
}

export type { RequestHandler };
