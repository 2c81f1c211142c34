/**
 * Recipient types (Zulip's Recipient.PERSONAL / STREAM / DIRECT_MESSAGE_GROUP):
 * every message goes to one recipient row of one of these kinds.
 */
export const RecipientType = {
  /** A user's own recipient (1:1 direct messages are stored as DM groups, ADR 0006). */
  PERSONAL: 1,
  CHANNEL: 2,
  DM_GROUP: 3,
} as const;
export type RecipientTypeCode = (typeof RecipientType)[keyof typeof RecipientType];

export const isChannelRecipient = (type: number) => type === RecipientType.CHANNEL;
