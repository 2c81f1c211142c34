import type { Data, Schema } from '../contract';
import type { AppContext } from '../context';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType, type AuditEventTypeCode } from '../domain/audit';
import { checkRealmDomain } from '../domain/realm-domains';
import { isAdminRole } from '../domain/roles';
import { adminRequired, ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { insertAuditLog } from '../queries/audit';
import { deleteRealmDomain, getRealmDomain, insertRealmDomain, listRealmDomains, setRealmDomainSubdomains } from '../queries/realm-domains';
import { getRealmById, updateRealm } from '../queries/realms';
import type { UserRow } from '../queries/rows';
import { listActiveUserIds } from '../queries/users';
import { toApiRealmDomain } from '../serializers/realm-domains';

type RealmDomain = Schema<'RealmDomain'>;

/** GET /realm/domains: any user of the organization may read them (Zulip's list_realm_domains has no role check). */
export async function listRealmDomainsFor(ctx: AppContext, user: UserRow): Promise<Data<'get-realm-domains'>> {
  return { domains: (await listRealmDomains(ctx.db, user.realm_id)).map(toApiRealmDomain) };
}

const notFound = (domain: string) => new ApiError(`No entry found for domain ${domain}.`);

/**
 * The audit row Zulip writes for a change of the domains: the organization's
 * domains after it, and the domain added, changed or removed.
 */
async function auditDomains(tx: Tx, actor: UserRow, eventType: AuditEventTypeCode, key: string, domain: RealmDomain): Promise<void> {
  const domains = (await listRealmDomains(tx.trx, actor.realm_id)).map(toApiRealmDomain);
  await insertAuditLog(tx.trx, { realmId: actor.realm_id, actorId: actor.id, eventType, extra: { realm_domains: domains, [key]: domain } });
}

type DomainsEvent = EventBody<Schema<'RealmDomainsEvent'>> | EventBody<Schema<'RealmUpdateEvent'>>;

async function announce(ctx: AppContext, tx: Tx, realmId: number, event: DomainsEvent): Promise<void> {
  const audience = await listActiveUserIds(tx.trx, realmId);
  tx.afterCommit(() => ctx.bus.publish({ event, userIds: audience }));
}

/** POST /realm/domains (Zulip's create_realm_domain and do_add_realm_domain). */
export async function doAddRealmDomain(
  ctx: AppContext,
  actor: UserRow,
  rawDomain: string,
  allowSubdomains: boolean,
): Promise<Data<'create-realm-domain'>> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  const domain = checkRealmDomain(rawDomain);
  return inTransaction(ctx.db, async (tx) => {
    if (await getRealmDomain(tx.trx, actor.realm_id, domain)) {
      throw new ApiError(`The domain ${domain} is already a part of your organization.`);
    }
    const id = await insertRealmDomain(tx.trx, actor.realm_id, domain, allowSubdomains);
    const added = { domain, allow_subdomains: allowSubdomains };
    await auditDomains(tx, actor, AuditEventType.REALM_DOMAIN_ADDED, 'added_domain', added);
    await announce(ctx, tx, actor.realm_id, { type: 'realm_domains', op: 'add', realm_domain: added });
    return { new_domain: [id, domain] };
  });
}

/** PATCH /realm/domains/{domain} (Zulip's patch_realm_domain): the domain as stored, exactly. */
export async function doChangeRealmDomain(ctx: AppContext, actor: UserRow, domain: string, allowSubdomains: boolean): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  await inTransaction(ctx.db, async (tx) => {
    const row = await getRealmDomain(tx.trx, actor.realm_id, domain);
    if (!row) throw notFound(domain);
    // Zulip saves, audits and announces even when the value does not change.
    await setRealmDomainSubdomains(tx.trx, actor.realm_id, row.id, allowSubdomains);
    const changed = { domain: row.domain, allow_subdomains: allowSubdomains };
    await auditDomains(tx, actor, AuditEventType.REALM_DOMAIN_CHANGED, 'changed_domain', changed);
    await announce(ctx, tx, actor.realm_id, { type: 'realm_domains', op: 'change', realm_domain: changed });
  });
}

/**
 * DELETE /realm/domains/{domain} (Zulip's do_remove_realm_domain). Removing
 * the last domain of an organization restricted to its domains lifts the
 * restriction, which would otherwise refuse every address: with the
 * property change's own audit row and realm update event, as Zulip does.
 */
export async function doRemoveRealmDomain(ctx: AppContext, actor: UserRow, domain: string): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  await inTransaction(ctx.db, async (tx) => {
    const row = await getRealmDomain(tx.trx, actor.realm_id, domain);
    if (!row) throw notFound(domain);
    await deleteRealmDomain(tx.trx, actor.realm_id, row.id);
    await auditDomains(tx, actor, AuditEventType.REALM_DOMAIN_REMOVED, 'removed_domain', toApiRealmDomain(row));
    const realm = (await getRealmById(tx.trx, actor.realm_id))!;
    if (realm.emails_restricted_to_domains && (await listRealmDomains(tx.trx, realm.id)).length === 0) {
      await updateRealm(tx.trx, realm.id, { emails_restricted_to_domains: false });
      await insertAuditLog(tx.trx, {
        realmId: realm.id,
        actorId: actor.id,
        eventType: AuditEventType.REALM_PROPERTY_CHANGED,
        extra: { old_value: true, new_value: false, property: 'emails_restricted_to_domains' },
      });
      await announce(ctx, tx, realm.id, { type: 'realm', op: 'update', property: 'emails_restricted_to_domains', value: false });
    }
    await announce(ctx, tx, actor.realm_id, { type: 'realm_domains', op: 'remove', domain: row.domain });
  });
}
