import type { Knex } from 'knex';
import { doSoftActivateUsers, doSoftDeactivateInactive, doSoftDeactivateUsers, IDLE_AFTER_DAYS } from '../actions/soft-deactivation';
import { ApiError } from '../errors';
import type { RealmRow } from '../queries/rows';
import { getUserByEmailKey } from '../queries/users';

export const SOFT_DEACTIVATE_USAGE = `  soft-deactivate [--realm ID] [--inactive-for DAYS] [--activate] [EMAIL…]
                                           run the daily soft deactivation now (users without a
                                           request for more than DAYS, 28 unless given, go idle),
                                           or mark the named users idle; --activate brings the
                                           named users back (their catch-up runs now)`;

/**
 * soft-deactivate (ADR 0058): the daily job once, for one organization, or
 * the named users marked idle or caught up and active again.
 */
export async function softDeactivateCommand(
  db: Knex,
  realm: RealmRow,
  values: { 'inactive-for'?: string; activate?: boolean },
  emails: readonly string[],
): Promise<string> {
  const ctx = { db };
  if (emails.length === 0) {
    if (values.activate) throw new ApiError('--activate needs the users to bring back');
    const given = values['inactive-for'];
    if (given !== undefined && !/^[0-9]{1,5}$/.test(given))
      throw new ApiError(`--inactive-for must be a whole number of days, not '${given}'`);
    const days = given === undefined ? IDLE_AFTER_DAYS : Number(given);
    const count = await doSoftDeactivateInactive(ctx, Math.floor(Date.now() / 1000), days, realm.id);
    return `${count} user(s) went idle.\n`;
  }
  if (values['inactive-for'] !== undefined) throw new ApiError('Give --inactive-for or users, not both');
  const ids: number[] = [];
  for (const email of emails) {
    const user = await getUserByEmailKey(db, realm.id, email.trim().toLowerCase());
    if (!user) throw new ApiError(`No user ${email} in that organization`);
    ids.push(user.id);
  }
  if (values.activate) return `${await doSoftActivateUsers(ctx, ids)} user(s) caught up and active again.\n`;
  return `${await doSoftDeactivateUsers(ctx, ids)} user(s) went idle.\n`;
}
