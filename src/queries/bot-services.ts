import type { Knex } from 'knex';
import { BotType } from '../domain/users';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** Zulip's Service.interface: the shape of the payload an outgoing webhook POSTs. */
export const SERVICE_INTERFACE = { generic: 1, slack: 2 } as const;
export type ServiceInterface = (typeof SERVICE_INTERFACE)[keyof typeof SERVICE_INTERFACE];

/** An outgoing-webhook bot's endpoint (Zulip's Service). */
export interface BotServiceRow {
  id: number;
  user_id: number;
  name: string;
  base_url: string;
  token: string;
  interface: ServiceInterface;
}

const COLUMNS = ['id', 'user_id', 'name', 'base_url', 'token', 'interface'] as const;

function toRow(r: Record<string, unknown>): BotServiceRow {
  return {
    id: Number(r.id),
    user_id: Number(r.user_id),
    name: String(r.name),
    base_url: String(r.base_url),
    token: String(r.token),
    interface: Number(r.interface) as ServiceInterface,
  };
}

export async function insertBotService(q: Q, row: Omit<BotServiceRow, 'id'>): Promise<number> {
  return insertOne(q, 'bot_services', row);
}

/** The services of these bots, by bot id (a bot has at most one today, as in Zulip's UI). */
export async function listBotServices(q: Q, userIds: readonly number[]): Promise<Map<number, BotServiceRow[]>> {
  const out = new Map<number, BotServiceRow[]>();
  if (userIds.length === 0) return out;
  const rows = await q('bot_services')
    .whereIn('user_id', userIds)
    .orderBy('id')
    .select([...COLUMNS]);
  for (const r of rows.map(toRow)) {
    const list = out.get(r.user_id) ?? [];
    list.push(r);
    out.set(r.user_id, list);
  }
  return out;
}

/** Changes a bot's services (PATCH /bots/{id}'s service_payload_url and service_interface). */
export async function updateBotServices(
  q: Q,
  userId: number,
  changes: Partial<Pick<BotServiceRow, 'base_url' | 'interface' | 'token'>>,
): Promise<void> {
  if (Object.keys(changes).length) await q('bot_services').where({ user_id: userId }).update(changes);
}

/** The active outgoing-webhook bots that have a service: those a message may trigger (src/actions/outgoing-webhooks.ts). */
export async function listOutgoingWebhookBotIds(q: Q): Promise<number[]> {
  const rows = await q('users')
    .whereIn('id', q('bot_services').select('user_id'))
    .where({ bot_type: BotType.OUTGOING_WEBHOOK, is_active: true })
    .select('id');
  return rows.map((r: { id: unknown }) => Number(r.id));
}
