import { Transform, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { bounded } from '../domain/bounded';
import { filePartType } from '../domain/uploads';
import { ApiError } from '../errors';
import type { FileStore, PendingFile } from '../storage/files';
import { scopeOf } from './scope';

/**
 * Request bodies, as Zulip clients send them: urlencoded (optionally
 * compressed) or multipart/form-data. Every limit is enforced while the body
 * streams in, and every way a body can be broken — garbage or truncated
 * compression, an unknown charset or encoding, too many fields, a malformed
 * multipart part — becomes a Zulip-shaped 4xx here, never a 500.
 */
export interface BodyLimits {
  /** Bytes of form data, after decompression (urlencoded) or of non-file parts (multipart). */
  formBytes: number;
  /** Form fields per request. */
  formFields: number;
  /** Bytes of one uploaded file. */
  fileBytes: number;
  /** Files per request. */
  files: number;
  /** The operation's own refusal of a second file, when it has one (src/http/upload-rules.ts). */
  secondFile?: () => ApiError;
  /** The operation's own refusal of a file over `fileBytes`, when it has one. */
  tooLarge?: () => ApiError;
}

/**
 * A file part of a multipart request to an operation that takes no file: it
 * is read and dropped (its name is reported as an ignored parameter), never
 * kept. Operations that take files receive them through `receiveUploads`.
 */
export interface UploadedFile {
  fieldname: string;
}

/** Form fields one request may carry (the API pipeline's budget, and incoming webhooks'): no operation declares a tenth of this. */
export const FORM_FIELDS = 1000;

/**
 * The refusals of a body, in the same words wherever a body is read (the API
 * pipeline here, incoming webhooks in ./webhooks.ts).
 */
export const tooLarge = () => new ApiError('Request body is too large', 'BAD_REQUEST', 413);
export const malformed = (what = 'Malformed request body') => new ApiError(what, 'BAD_REQUEST', 400);
export const unsupportedCharset = (charset: string) => new ApiError(`Unsupported charset: ${bounded(charset)}`, 'BAD_REQUEST', 415);
export const unsupportedEncoding = () => new ApiError('Unsupported Content-Encoding', 'BAD_REQUEST', 415);
export const multipartEncodingRefused = () => new ApiError('Content-Encoding is not supported for multipart bodies', 'BAD_REQUEST', 415);

export function bodyParsers(limits: BodyLimits): RequestHandler {
  const form = formBody(limits);
  const multipart = multipartBody(limits);
  return (req, res, next) => {
    // No Content-Length and no Transfer-Encoding: no body (most GETs), nothing to parse.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      next();
      return;
    }
    form(req, res, (err?: unknown) => (err ? next(err) : multipart(req, res, next)));
  };
}

/**
 * express.urlencoded (body-parser) decompresses gzip, deflate and br bodies and
 * applies `limit` to the decompressed bytes, so a small compressed body cannot
 * expand without bound. Its errors carry an HTTP status (413, 415) or none
 * (zlib's "incorrect header check" on garbage); all are client errors.
 */
function formBody(limits: BodyLimits): RequestHandler {
  const parse = express.urlencoded({ extended: false, limit: limits.formBytes, parameterLimit: limits.formFields });
  return (req, res, next) => {
    void parse(req, res, (err?: unknown) => next(err === undefined ? undefined : bodyParserError(err)));
  };
}

function bodyParserError(err: unknown): ApiError {
  const e = err as { status?: number; type?: string; charset?: string };
  if (e?.status === 413) return tooLarge();
  if (e?.type === 'charset.unsupported') return unsupportedCharset(String(e.charset ?? ''));
  if (e?.status === 415) return unsupportedEncoding();
  return malformed();
}

/**
 * multipart/form-data through busboy (the parser multer wraps), so that the
 * whole body is bounded: a counter between the socket and the parser stops a
 * body larger than the form budget plus one file, whatever its parts say.
 * Fields land in a prototype-free object, so a field named `__proto__` is just
 * a field. Compressed multipart bodies are refused: no Zulip client sends them.
 */
function multipartBody(limits: BodyLimits): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('multipart/form-data') || scopeOf(res).deferUploads) {
      next();
      return;
    }
    const fields: Record<string, string | string[]> = Object.create(null);
    const files: UploadedFile[] = [];
    const refused = streamMultipart(
      req,
      res,
      {
        fileSize: limits.fileBytes,
        files: limits.files,
        formBytes: limits.formBytes,
        formFields: limits.formFields,
        totalBytes: limits.formBytes + limits.fileBytes,
      },
      {
        field(name, value) {
          const prior = fields[name];
          fields[name] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
        },
        file(name, stream, _info, part) {
          stream.resume();
          stream.on('end', () => {
            if (!part.settled()) files.push({ fieldname: name });
          });
        },
        tooManyFiles: tooLarge,
        failed: next,
        read(settle) {
          if (!settle()) return;
          req.body = fields;
          scopeOf(res).uploadedFiles = files;
          next();
        },
      },
    );
    if (refused) next(refused);
  };
}

/** Passes bytes through until more than `max` have gone by, then fails. */
class ByteCounter extends Transform {
  private seen = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.max) done(new Error('body too large'));
    else done(null, chunk);
  }
}

/**
 * After a refused body the rest of it is not worth reading: the error response
 * closes the connection, and whatever the client still sends is dropped.
 */
function discard(req: Request, res: Response): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
  req.resume();
}

/** A file part received by an operation that takes files, written to storage but not yet published. */
export interface ReceivedFile {
  fieldname: string;
  /** The name the client gave (not yet sanitised). */
  originalname: string;
  mimetype: string;
  size: number;
  file: PendingFile;
}

/** What `receiveUploads` read: the stored files and the text fields beside them. */
export interface ReceivedUploads {
  files: ReceivedFile[];
  fields: Record<string, string | string[]>;
}

/**
 * The multipart body of an operation that takes a file (POST /user_uploads),
 * read only after the caller is authenticated, each file part streamed into
 * storage as it arrives (busboy → a file, with backpressure), so a large
 * upload is never held in memory. Zulip's rules are applied while streaming:
 * a second file part or a file over the size limit ends the request at once,
 * its bytes deleted before the answer; whatever the client still sends is
 * read and dropped. Resolves to the stored files, which the caller publishes
 * or aborts, and the body's text fields: a Zulip client may send an
 * operation's parameters beside the file (the web app sends POST
 * /realm/logo's `night` so), and Django reads them as it reads any form
 * field, so they go through the same parameter handling as any body's.
 */
export function receiveUploads(req: Request, res: Response, store: FileStore, limits: BodyLimits): Promise<ReceivedUploads> {
  return new Promise<ReceivedUploads>((resolve, reject) => {
    const received: ReceivedFile[] = [];
    // Prototype-free, as any parsed body: a field named __proto__ is just a field.
    const fields: Record<string, string | string[]> = Object.create(null);
    const writes: Array<Promise<void>> = [];
    const secondFile = () => limits.secondFile?.() ?? new ApiError('You may only upload one file at a time');
    const refused = streamMultipart(
      req,
      res,
      {
        formBytes: limits.formBytes,
        formFields: limits.formFields,
        // busboy stops a file when it reaches this size; a file of exactly
        // the limit is allowed (as Zulip), so the stop is one byte later.
        fileSize: limits.fileBytes + 1,
        // One more than allowed, so that the second file is seen and refused in Zulip's words.
        files: 2,
        // The file budget, the form budget and room for part headers: a body past this is not an upload.
        totalBytes: limits.formBytes + limits.fileBytes + 64 * 1024,
        // A client that goes away mid-upload: its partial file is deleted at once.
        failWhenClientLeaves: true,
      },
      {
        field(name, value) {
          const prior = fields[name];
          fields[name] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
        },
        file(name, stream, info, part) {
          if (received.length + writes.length >= 1) {
            stream.resume();
            return part.fail(secondFile());
          }
          stream.pause();
          writes.push(
            store.create().then(
              (file) =>
                new Promise<void>((done) => {
                  const originalname = info.filename ?? '';
                  const entry: ReceivedFile = {
                    fieldname: name,
                    originalname,
                    mimetype: filePartType(info.mimeType, originalname),
                    size: 0,
                    file,
                  };
                  received.push(entry);
                  if (part.settled()) {
                    stream.resume();
                    done();
                    return;
                  }
                  stream.on('data', (chunk: Buffer) => {
                    entry.size += chunk.length;
                  });
                  stream.on('limit', () => {
                    part.fail(
                      limits.tooLarge?.() ??
                        new ApiError(
                          `File is larger than this server's configured maximum upload size (${limits.fileBytes / 1048576} MiB).`,
                        ),
                    );
                  });
                  // The store failing is the server's fault: a 500, logged (src/http/errors.ts).
                  file.stream.on('error', (e) => part.fail(new Error(`writing an uploaded file failed: ${String(e)}`)));
                  file.stream.on('finish', () => done());
                  file.stream.on('close', () => done());
                  stream.pipe(file.stream);
                }),
              () => {
                stream.resume();
                part.fail(new Error('creating a file in the store failed'));
              },
            ),
          );
        },
        tooManyFiles: secondFile,
        failed(err) {
          // Nothing of a refused upload stays on disk: the answer waits for the
          // deletions (aborting ends a write in progress; a file whose creation
          // was still pending is aborted once it exists).
          for (const f of received) void f.file.abort();
          void Promise.allSettled(writes)
            .then(() => Promise.allSettled(received.map((f) => f.file.abort())))
            .then(() => reject(err));
        },
        read(settle) {
          void Promise.allSettled(writes).then(() => {
            if (!settle()) return;
            resolve({ files: received, fields });
          });
        },
      },
    );
    if (refused) reject(refused);
  });
}

/** What a multipart body may hold, and how it is read. */
interface MultipartLimits {
  formBytes: number;
  formFields: number;
  fileSize: number;
  files: number;
  /** Bytes of the whole body the counter lets through. */
  totalBytes: number;
  /** Refuse the body when the client goes away before it is complete. */
  failWhenClientLeaves?: boolean;
}

/** A file part's handle on the body it belongs to. */
interface PartControl {
  /** Refuses the request (once; the body is then read and dropped). */
  fail(err: Error): void;
  /** Whether the body has been refused or finished. */
  settled(): boolean;
}

/** What each caller of `streamMultipart` does with the parts; the budgets and refusals are common. */
interface MultipartHandlers {
  /** A field within the budgets. */
  field?(name: string, value: string): void;
  /** A file part with a name. */
  file(name: string, stream: NodeJS.ReadableStream, info: busboy.FileInfo, part: PartControl): void;
  /** The refusal of a part beyond the `files` limit. */
  tooManyFiles(): ApiError;
  /** The body was refused (called once, after the parser is detached and the rest is being dropped). */
  failed(err: Error): void;
  /** The parser has read the whole body; `settle()` is false when a refusal came first. */
  read(settle: () => boolean): void;
}

/**
 * One multipart body through busboy: the byte counter, the field budget,
 * every refusal and its clean-up, and guarded parser callbacks (they run on
 * the parser's stream events, outside Express: a throw there would end the
 * process). Returns the error to answer when no parser could be opened.
 */
function streamMultipart(req: Request, res: Response, limits: MultipartLimits, on: MultipartHandlers): ApiError | undefined {
  const parser = openMultipart(req, res, limits);
  if (parser instanceof ApiError) return parser;
  let formBytes = 0;
  let settled = false;
  const counter = new ByteCounter(limits.totalBytes);
  const fail = (err: Error) => {
    if (settled) return;
    settled = true;
    req.unpipe(counter);
    counter.unpipe(parser);
    parser.removeAllListeners();
    parser.on('error', () => undefined);
    discard(req, res);
    on.failed(err);
  };
  const part: PartControl = { fail, settled: () => settled };
  const guarded =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A) => {
      try {
        fn(...args);
      } catch {
        fail(malformed('Malformed multipart body'));
      }
    };
  parser.on(
    'field',
    guarded((name: string | undefined, value: string, info: busboy.FieldInfo) => {
      if (typeof name !== 'string') return fail(malformed('Malformed multipart body: a part has no name'));
      if (info.nameTruncated) return fail(malformed('Parameter name too long'));
      if (info.valueTruncated) return fail(tooLarge());
      formBytes += Buffer.byteLength(name) + Buffer.byteLength(value);
      if (formBytes > limits.formBytes) return fail(tooLarge());
      on.field?.(name, value);
    }),
  );
  parser.on(
    'file',
    guarded((name: string | undefined, stream: NodeJS.ReadableStream, info: busboy.FileInfo) => {
      stream.on('error', () => fail(malformed('Malformed multipart body')));
      if (typeof name !== 'string') {
        stream.resume();
        return fail(malformed('Malformed multipart body: a part has no name'));
      }
      on.file(name, stream, info, part);
    }),
  );
  parser.on('fieldsLimit', () => fail(tooLarge()));
  parser.on('partsLimit', () => fail(tooLarge()));
  parser.on('filesLimit', () => fail(on.tooManyFiles()));
  // busboy's own errors ("Unexpected end of form", "Malformed part header") are the client's.
  parser.on('error', () => fail(malformed('Malformed multipart body')));
  counter.on('error', () => fail(tooLarge()));
  req.on('error', () => fail(malformed()));
  if (limits.failWhenClientLeaves) {
    req.on('close', () => {
      if (!req.complete) fail(malformed());
    });
  }
  parser.on('close', () => {
    if (settled) return;
    on.read(() => {
      if (settled) return false;
      settled = true;
      return true;
    });
  });
  req.pipe(counter).pipe(parser);
  return undefined;
}

/**
 * A busboy parser for this multipart request with our limits, or the error
 * to answer (the body is then read and dropped): compressed multipart bodies
 * are refused (no Zulip client sends them), and a missing boundary or an
 * unsupported content type is a malformed body.
 */
function openMultipart(req: Request, res: Response, limits: MultipartLimits): busboy.Busboy | ApiError {
  const encoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding !== 'identity') {
    discard(req, res);
    return multipartEncodingRefused();
  }
  try {
    return busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: {
        fieldNameSize: 200,
        fieldSize: limits.formBytes,
        fields: limits.formFields,
        fileSize: limits.fileSize,
        files: limits.files,
        parts: limits.formFields + limits.files,
        headerPairs: 20,
      },
    });
  } catch {
    // "Multipart: Boundary not found", "Unsupported content type", ...
    discard(req, res);
    return malformed('Malformed multipart body');
  }
}
