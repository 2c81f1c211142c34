import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors';

/** "/user_uploads/<path_id>" in message content: a reference to an uploaded file. */
const UPLOAD_PATH = /\/user_uploads\/([^\s()<>"'[\]]+)/g;

/** The upload path ids content references; the scan runs only when the content names /user_uploads/ at all. */
export function referencedUploads(content: string): string[] {
  if (!content.includes('/user_uploads/')) return [];
  return [...new Set([...content.matchAll(UPLOAD_PATH)].map((m) => decodeSafely(m[1]!)))];
}

function decodeSafely(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * A file name made safe for a file system, an object store and a URL, as
 * Zulip's sanitize_name: Unicode NFKC, only word characters, '.', '-' and
 * whitespace kept, runs of '-' and whitespace become one '-', and a name left
 * empty (or '.' / '..') becomes "uploaded-file". Kept to 100 characters (the
 * end, with the extension) so that a path id fits its 255-character column.
 */
export function sanitizeFileName(name: string): string {
  let value = name
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}_\s.-]/gu, '')
    .trim();
  value = value.replace(/[-\s]+/g, '-');
  if (value.length > 100) value = value.slice(value.length - 100);
  return value === '' || value === '.' || value === '..' ? 'uploaded-file' : value;
}

/** The random segment of a path id: 18 random bytes in URL-safe Base64 (24 characters), as Zulip's token_urlsafe(18). */
const TOKEN = /^[A-Za-z0-9_-]{24}$/;

/**
 * Zulip's path id: `<realm id>/<a random byte in hex>/<random token>/<file name>`.
 * The hex bucket spreads files over directories; it has one or two digits, as
 * Zulip formats it without padding.
 */
export function newPathId(realmId: number, fileName: string, random: Buffer): string {
  if (random.length < 19) throw new Error('newPathId needs 19 random bytes');
  return `${realmId}/${random[0]!.toString(16)}/${random.subarray(1, 19).toString('base64url')}/${fileName}`;
}

/**
 * Whether `pathId` has the shape of a path id this server creates: checked
 * before any file-system or database lookup, so '..', a backslash, an
 * absolute path, a NUL or an extra segment never reach storage.
 */
export function isSafePathId(pathId: string): boolean {
  const parts = pathId.split('/');
  if (parts.length !== 4) return false;
  const [realm, bucket, token, name] = parts as [string, string, string, string];
  return (
    /^[1-9][0-9]{0,9}$/.test(realm) &&
    /^[0-9a-f]{1,2}$/.test(bucket) &&
    TOKEN.test(token) &&
    name.length > 0 &&
    name.length <= 200 &&
    name !== '.' &&
    name !== '..' &&
    // eslint-disable-next-line no-control-regex
    !/[\\/\x00-\x1f:]/.test(name)
  );
}

/**
 * Types a browser may show inline from our origin (Zulip's INLINE_MIME_TYPES).
 * Everything else — HTML, SVG, XML, scripts — is served as a download, so an
 * uploaded page can never run with the server's cookies or origin.
 */
export const INLINE_CONTENT_TYPES: ReadonlySet<string> = new Set([
  'application/pdf',
  'audio/aac',
  'audio/flac',
  'audio/mp4',
  'audio/mpeg',
  'audio/wav',
  'audio/webm',
  'image/apng',
  'image/avif',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/webp',
  'text/plain',
  'video/mp4',
  'video/webm',
]);

const BY_EXTENSION: ReadonlyMap<string, string> = new Map([
  ['txt', 'text/plain'],
  ['md', 'text/markdown'],
  ['csv', 'text/csv'],
  ['html', 'text/html'],
  ['htm', 'text/html'],
  ['svg', 'image/svg+xml'],
  ['xml', 'application/xml'],
  ['json', 'application/json'],
  ['js', 'text/javascript'],
  ['pdf', 'application/pdf'],
  ['zip', 'application/zip'],
  ['gz', 'application/gzip'],
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['gif', 'image/gif'],
  ['webp', 'image/webp'],
  ['avif', 'image/avif'],
  ['apng', 'image/apng'],
  ['mp3', 'audio/mpeg'],
  ['m4a', 'audio/mp4'],
  ['wav', 'audio/wav'],
  ['flac', 'audio/flac'],
  ['mp4', 'video/mp4'],
  ['webm', 'video/webm'],
]);

/**
 * The stored content type: what the client declared for the part, unless it
 * declared nothing useful (application/octet-stream), in which case the
 * file name's extension decides, as Zulip guesses it.
 */
export function uploadContentType(declared: string | undefined, fileName: string): string {
  const d = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  if (d && d !== 'application/octet-stream' && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(d)) return d;
  return typeByExtension(fileName) ?? 'application/octet-stream';
}

/** The type a file name's extension names, if it is one Parley knows. */
function typeByExtension(fileName: string): string | undefined {
  const dot = fileName.lastIndexOf('.');
  return dot >= 0 ? BY_EXTENSION.get(fileName.slice(dot + 1).toLowerCase()) : undefined;
}

/**
 * The type of a multipart file part, as Zulip reads it. A part without a
 * Content-Type header (the Python bindings send every file so) has no
 * declared type there, and Zulip guesses one from the file name. busboy
 * reports such a part as text/plain, the multipart default, and cannot tell
 * it from a declared text/plain: so text/plain counts as undeclared when the
 * name's extension names a type that is not text (img.jpg: image/jpeg), and
 * a text file keeps it.
 */
export function filePartType(reported: string, fileName: string): string {
  if (reported.toLowerCase() !== 'text/plain') return reported;
  const guessed = typeByExtension(fileName);
  return guessed !== undefined && !guessed.startsWith('text/') ? guessed : reported;
}

/** How long a temporary file URL works (Zulip: 60 seconds). */
export const TEMPORARY_URL_SECONDS = 60;

/**
 * The token of a temporary URL: the path id and the time it was issued,
 * signed with the server's secret (HMAC-SHA256), hex-encoded as Zulip
 * encodes its signed token.
 */
export function signFileToken(secret: Buffer, pathId: string, issuedAt: number): string {
  const payload = `${pathId}:${issuedAt}`;
  return Buffer.from(`${payload}:${mac(secret, payload)}`).toString('hex');
}

/** The path id a token grants, or null when it is forged, malformed or older than TEMPORARY_URL_SECONDS. */
export function verifyFileToken(secret: Buffer, token: string, now: number): string | null {
  if (!/^(?:[0-9a-f]{2}){1,600}$/.test(token)) return null;
  const text = Buffer.from(token, 'hex').toString('utf8');
  const m = /^(.+):(\d{1,15}):([A-Za-z0-9_-]{43})$/.exec(text);
  if (!m) return null;
  const [, pathId, issued, given] = m as unknown as [string, string, string, string];
  const expected = mac(secret, `${pathId}:${issued}`);
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(given))) return null;
  const age = now - Number(issued);
  return age >= 0 && age <= TEMPORARY_URL_SECONDS && isSafePathId(pathId) ? pathId : null;
}

function mac(secret: Buffer, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}

/** Zulip's answer to an upload request that carries no file (no file part, or not a multipart body at all). */
export const noFileToUpload = () => new ApiError('You must specify a file to upload');
