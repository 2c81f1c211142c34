import fs from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { SETTINGS, type SettingName, type SettingWithDefault } from './settings';

/**
 * One setting refused at start. main.ts prints its message as the one line
 * the operator sees (no stack trace) and exits 1, so the message names the
 * setting, what it accepts and what it got.
 */
export class ConfigError extends Error {
  constructor(name: string, accepts: string, got: string) {
    super(`Invalid configuration: ${name} ${accepts}, got ${JSON.stringify(bounded(got))}`);
    this.name = 'ConfigError';
  }
}

/** A value quoted in a message is cut: it is an echo, not a dump. */
function bounded(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

/**
 * A setting's raw value; empty or blank is the same as unset (`FOO= node …`).
 * Only the settings src/config/settings.ts lists can be read.
 */
export function setting(env: NodeJS.ProcessEnv, name: SettingName): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** A setting's raw value, or its default from src/config/settings.ts when unset. */
export function settingOrDefault(env: NodeJS.ProcessEnv, name: SettingWithDefault): string {
  return setting(env, name) ?? SETTINGS[name].default;
}

/** The entries of a comma-separated setting, trimmed, empty ones dropped. */
export function commaList(raw: string): string[] {
  return raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
}

/** Whether an entry is an address or a CIDR range (a.b.c.d/n, x::y/n). */
export function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  const bits = family === 4 ? 32 : 128;
  return family !== 0 && (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)) && rest.length === 0;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function positiveInt(name: string, raw: string): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new ConfigError(name, 'must be a positive integer', raw);
  return n;
}

export function portNumber(name: string, raw: string): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(name, 'must be an integer 0..65535', raw);
  return n;
}

/** Only these four spellings: `yes`, `on` or a typo must not silently mean false. */
export function boolean(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(name, 'must be true, false, 1 or 0', raw);
}

export function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a === raw.trim());
  if (!found) throw new ConfigError(name, `must be one of ${allowed.join(', ')}`, raw);
  return found;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** An address to bind: an IPv4 or IPv6 address, or a host name. */
export function hostName(name: string, raw: string): string {
  const v = raw.trim();
  if (isIP(v) === 0 && !HOST_NAME.test(v)) throw new ConfigError(name, 'must be an IP address or a host name', raw);
  return v;
}

/**
 * The URL this machine reaches a listener at, EXTERNAL_URL's default: an IPv6
 * address in brackets, and for a wildcard address (listening everywhere) the
 * loopback of its family, since no client can connect to 0.0.0.0 or ::.
 */
export function listenerUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '::0' ? '::1' : host;
  return `http://${hostPort(reachable, port)}`;
}

/** `host:port`, an IPv6 address in brackets (as in a URL). */
export function hostPort(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** Resolved; refused when something other than a directory is already there. */
export function directory(name: string, raw: string): string {
  const resolved = path.resolve(raw);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(resolved);
  } catch {
    stat = undefined; // created on first use
  }
  if (stat && !stat.isDirectory()) throw new ConfigError(name, 'must be a directory (or a path where one can be made)', raw);
  return resolved;
}

export function httpUrl(name: string, raw: string): string {
  const u = URL.canParse(raw) ? new URL(raw) : null;
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.host) {
    throw new ConfigError(name, 'must be an absolute http:// or https:// URL', raw);
  }
  return raw.trim();
}

export function optionalHttpUrl(name: string, raw: string | undefined): string | null {
  return raw === undefined ? null : httpUrl(name, raw);
}

/**
 * mysql:// or mariadb:// with a database name; unset selects SQLite. The
 * message never repeats the password the URL may hold.
 */
export function databaseUrl(name: string, raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const u = URL.canParse(raw) ? new URL(raw) : null;
  const shown = withoutPassword(raw);
  if (!u || (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') || u.pathname.replace(/^\//, '') === '') {
    throw new ConfigError(name, 'must be a mysql:// or mariadb:// URL naming a database (mysql://user:password@host:port/database)', shown);
  }
  return raw;
}

/** The user:password@ part of a URL-like text, with the password replaced, whether or not it parses. */
export function withoutPassword(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?([^:@/]*):[^@]*@/i, '$1$2:***@');
}

/** A count where 0 means "none" (a cache's size: 0 turns it off). */
export function nonNegativeInt(name: string, raw: string): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw new ConfigError(name, 'must be a non-negative integer', raw);
  return n;
}
