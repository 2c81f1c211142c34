import { createChannelInTx } from '../../src/actions/channels';
import { doCreateRealm } from '../../src/actions/realms';
import { createUserInTx } from '../../src/actions/users';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/connection';
import { migrateLatest } from '../../src/db/migrate';
import { inTransaction } from '../../src/db/transaction';
import { Role } from '../../src/domain/roles';
import { getUserById } from '../../src/queries/users';
import type { Credential } from './dataset';

export interface ScratchOrganization {
  /** The owner first, then the members. */
  users: Credential[];
  /** The channels' ids, in the order they were named. */
  channelIds: number[];
}

/**
 * A small organization loaded straight into an empty database (migrated
 * here) through the actions: `users` users, the first the owner, named
 * `${prefix}${i}@example.com` and `${fullName} ${i}`, all subscribed to
 * every channel of `channels`. SQLite in `dataDir` unless `databaseUrl`
 * names a database.
 */
export async function loadScratchOrganization(
  dataDir: string,
  databaseUrl: string | null,
  org: { name: string; users: number; prefix: string; fullName: string; channels: readonly string[] },
): Promise<ScratchOrganization> {
  const config = { ...loadConfig({}), dataDir, databaseUrl: databaseUrl || null };
  const db = createDb(config);
  try {
    await migrateLatest(db);
    const realmId = await doCreateRealm(db, { stringId: '', name: org.name });
    return await inTransaction(db, async (tx) => {
      const users: ScratchOrganization['users'] = [];
      for (let i = 0; i < org.users; i++) {
        const row = await createUserInTx(tx, null, {
          realmId,
          email: `${org.prefix}${i}@example.com`,
          fullName: `${org.fullName} ${i}`,
          role: i === 0 ? Role.OWNER : Role.MEMBER,
        });
        users.push({ id: row.id, email: row.email, api_key: row.api_key });
      }
      const owner = (await getUserById(tx.trx, users[0]!.id))!;
      const subscriberIds = users.map((u) => u.id);
      const channelIds: number[] = [];
      for (const name of org.channels) channelIds.push(await createChannelInTx(tx, owner, { name, subscriberIds }));
      return { users, channelIds };
    });
  } finally {
    await db.destroy();
  }
}
