import pino, { type DestinationStream, type Logger } from 'pino';
import { prettyLine } from './log-pretty';
import { StdoutLines } from './stdio';

/**
 * Never logged, wherever they appear in a logged object: credentials a
 * request carries (the Authorization header holds the API key), passwords and
 * API keys in bodies or results. The access log already logs no headers and
 * no body; this is the net under every other log call.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'password',
  'api_key',
  'new_password',
  'old_password',
  '*.authorization',
  '*.password',
  '*.api_key',
  '*.new_password',
  '*.old_password',
  '*.*.password',
  '*.*.api_key',
];

/**
 * The process's logger: JSON lines when stdout is not a terminal (log
 * collectors parse them), one readable line per entry when it is
 * (src/log-pretty.ts). Either way to stdout through StdoutLines, which never
 * holds the process when nobody reads any more.
 */
export function createLogger(
  level: string,
  opts: { destination?: DestinationStream & NodeJS.WritableStream; pretty?: boolean; colorize?: boolean } = {},
): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[Redacted]' } };
  const pretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true);
  const destination = opts.destination ?? new StdoutLines();
  if (!pretty) return pino(options, destination);
  // Loaded only for a terminal: a server whose output is collected never needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { PinoPretty } = require('pino-pretty') as typeof import('pino-pretty');
  return pino(
    options,
    PinoPretty({
      colorize: opts.colorize ?? true,
      translateTime: 'SYS:HH:MM:ss.l',
      // Everything an entry says is in its one line (prettyLine): no object below it.
      hideObject: true,
      messageFormat: (entry) => prettyLine(entry),
      destination,
      sync: true,
    }),
  );
}

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY = /([?&](?:password|api_key|new_password|old_password|token|key)=)[^&#]*/gi;

/**
 * Paths whose last part is a secret: a password reset link, an email
 * invitation's or a reusable link's key (either makes an account, possibly
 * an administrator's), a mail's unsubscribe token.
 */
const SECRET_PATH =
  /^(\/accounts\/password\/reset\/(?!done\/)|\/accounts\/do_confirm\/|\/join\/|\/accounts\/unsubscribe\/[^/?#]+\/)[^/?#]+/i;

/** A URL for the log: secrets in its path and query string replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_PATH, '$1[Redacted]').replace(SECRET_QUERY, '$1[Redacted]');
}
