import type { Schema } from '../contract';

/**
 * The reasons a message can be reported for: Zulip's
 * Realm.REPORT_MESSAGE_REASONS, in its order. POST /register sends them as
 * server_report_message_types, and POST /messages/{id}/report accepts
 * exactly these keys.
 */
export const REPORT_MESSAGE_TYPES: Array<Schema<'ReportMessageType'>> = [
  { key: 'spam', name: 'Spam' },
  { key: 'harassment', name: 'Harassment' },
  { key: 'inappropriate', name: 'Inappropriate content' },
  { key: 'norms', name: 'Violates community norms' },
  { key: 'other', name: 'Other reason' },
];

/** A report's description, in code points (Realm.MAX_REPORT_MESSAGE_EXPLANATION_LENGTH). */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;

/** The display name of a report type, or undefined for a key that is not one. */
export const reportTypeName = (key: string): string | undefined => REPORT_MESSAGE_TYPES.find((t) => t.key === key)?.name;
