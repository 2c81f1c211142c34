/** A status text's limit in characters (code points), after trimming: Zulip's UserStatus.MAX_STATUS_TEXT_LENGTH. */
export const MAX_STATUS_TEXT_LENGTH = 60;
