import { flagMask } from './flags';

/**
 * Flags that only a few of a user's messages carry, each kept (besides its
 * bit in user_messages.flags, which stays the value messages are served with)
 * as a row (user_id, message_id) in a table of its own. MariaDB has no partial
 * indexes: indexing these bits on user_messages put every row of every send
 * into three more B-trees, though almost none of them is starred, mentioned or
 * a DM. A side table holds only the rows that have the flag, so a channel
 * message without mentions writes nothing there, while `is:starred`,
 * `is:mentioned` and `is:dm` still read an index of just their rows.
 *
 * `mask`: the bits a row needs (any of them) to belong in the table.
 */
export const SPARSE_FLAGS = [
  { name: 'starred', table: 'user_message_starred', mask: flagMask('starred') },
  {
    // Every kind of mention, as Zulip's is:mentioned (group mentions included).
    name: 'mentioned',
    table: 'user_message_mentioned',
    mask:
      flagMask('mentioned') + flagMask('stream_wildcard_mentioned') + flagMask('topic_wildcard_mentioned') + flagMask('group_mentioned'),
  },
  { name: 'dm', table: 'user_message_dm', mask: flagMask('is_private') },
] as const;

export type SparseFlag = (typeof SPARSE_FLAGS)[number];
export type SparseFlagName = SparseFlag['name'];

/** The sparse flags whose bits intersect `mask` (those a change of these bits may add or remove). */
export const sparseFlagsTouchedBy = (mask: number): SparseFlag[] => SPARSE_FLAGS.filter((f) => (f.mask & mask) !== 0);

export const sparseFlag = (name: SparseFlagName): SparseFlag => SPARSE_FLAGS.find((f) => f.name === name)!;
