import crypto from 'node:crypto';

/** The key of a DM conversation: a hash of its participants' sorted, distinct ids. */
export function dmGroupHash(userIds: number[]): string {
  const sorted = [...new Set(userIds)].sort((a, b) => a - b);
  return crypto.createHash('sha1').update(sorted.join(',')).digest('hex');
}
