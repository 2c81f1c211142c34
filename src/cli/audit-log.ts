import type { Knex } from 'knex';
import { auditEventTypeName, AuditEventType, AuditExtra } from '../domain/audit';
import { Role } from '../domain/roles';
import { ApiError } from '../errors';
import { AuditLogRow, listAuditLog } from '../queries/audit';
import { getRealmByStringId } from '../queries/realms';
import { getUserByEmailKey } from '../queries/users';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;
/** The text output cuts each value, and each row's change column, so a row stays one readable line. */
const MAX_VALUE_CHARS = 60;
const MAX_CHANGE_CHARS = 160;

export interface AuditLogOptions {
  realm: string;
  user?: string;
  limit?: string;
  json?: boolean;
}

/**
 * `audit-log`: an organization's audit rows, newest first, as aligned text
 * (time, acting user, event type, target, old → new) or as JSON lines with
 * every field. At most MAX_LIMIT rows, so the output stays bounded.
 */
export async function auditLogCommand(db: Knex, opts: AuditLogOptions): Promise<string> {
  const limit = opts.limit === undefined ? DEFAULT_LIMIT : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ApiError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`);
  }
  const realm = await getRealmByStringId(db, opts.realm);
  if (!realm) throw new ApiError(`No organization with string id '${opts.realm}'`);
  let userId: number | undefined;
  if (opts.user !== undefined) {
    const user = await getUserByEmailKey(db, realm.id, opts.user.trim().toLowerCase());
    if (!user) throw new ApiError(`No user ${opts.user} in that organization`);
    userId = user.id;
  }
  const rows = await listAuditLog(db, realm.id, { userId, limit });
  if (opts.json) return rows.map((r) => JSON.stringify(toJson(r)) + '\n').join('');
  if (rows.length === 0) return 'No audit log entries.\n';
  const table = [['TIME', 'ACTING USER', 'EVENT', 'TARGET', 'CHANGE'], ...rows.map(toColumns)];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((cols) => cols[i]!.length)));
  const lines = table.map((cols) =>
    cols
      .map((c, i) => (i < cols.length - 1 ? c.padEnd(widths[i]!) : c))
      .join('  ')
      .trimEnd(),
  );
  if (rows.length === limit) lines.push(`(the newest ${limit}; --limit N shows up to ${MAX_LIMIT})`);
  return lines.join('\n') + '\n';
}

const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

function toJson(r: AuditLogRow) {
  return {
    id: r.id,
    time: isoTime(r.event_time),
    event_type: r.event_type,
    event_type_name: auditEventTypeName(r.event_type),
    acting_user: r.acting_user_id === null ? null : { id: r.acting_user_id, email: r.acting_email },
    modified_user: r.modified_user_id === null ? null : { id: r.modified_user_id, email: r.modified_email },
    modified_channel: r.modified_channel_id === null ? null : { id: r.modified_channel_id, name: r.channel_name },
    modified_group: r.modified_group_id === null ? null : { id: r.modified_group_id, name: r.group_name },
    extra_data: r.extra_data === null ? null : JSON.parse(r.extra_data),
  };
}

function toColumns(r: AuditLogRow): string[] {
  const target: string[] = [];
  if (r.modified_user_id !== null) target.push(`user ${r.modified_email ?? r.modified_user_id}`);
  if (r.modified_channel_id !== null) target.push(`channel #${r.channel_name ?? r.modified_channel_id}`);
  // Anonymous groups (a setting's own members) have no name.
  if (r.modified_group_id !== null) target.push(`group ${r.group_name ?? r.modified_group_id}`);
  return [
    isoTime(r.event_time),
    r.acting_user_id === null ? '-' : (r.acting_email ?? String(r.acting_user_id)),
    auditEventTypeName(r.event_type),
    target.join(', ') || '-',
    describeChange(r.event_type, r.extra_data === null ? null : JSON.parse(r.extra_data)),
  ];
}

const ROLE_NAMES = new Map<unknown, string>([
  [Role.OWNER, 'owner'],
  [Role.ADMINISTRATOR, 'administrator'],
  [Role.MODERATOR, 'moderator'],
  [Role.MEMBER, 'member'],
  [Role.GUEST, 'guest'],
]);

const cut = (text: string, max: number) => (text.length > max ? text.slice(0, max - 1) + '…' : text);

function show(value: unknown, isRole = false): string {
  return cut(isRole && ROLE_NAMES.has(value) ? ROLE_NAMES.get(value)! : (JSON.stringify(value) ?? 'null'), MAX_VALUE_CHARS);
}

/** The property (or other details, as key=value) a row concerns, then "old → new" for a change. */
function describeChange(eventType: number, extra: AuditExtra | null): string {
  if (!extra) return '';
  const isRole = eventType === AuditEventType.USER_ROLE_CHANGED;
  const parts: string[] = [];
  if (typeof extra.property === 'string') parts.push(`${extra.property}:`);
  for (const [k, v] of Object.entries(extra)) {
    if (!['old_value', 'new_value', 'property'].includes(k)) parts.push(`${k}=${show(v, k === 'role' || k === 'invited_as')}`);
  }
  if ('old_value' in extra || 'new_value' in extra) parts.push(`${show(extra.old_value, isRole)} → ${show(extra.new_value, isRole)}`);
  return cut(parts.join(' '), MAX_CHANGE_CHARS);
}
