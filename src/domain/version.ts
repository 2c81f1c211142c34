/**
 * The Zulip API feature level Parley implements. Clients gate features on it,
 * so it only moves when the behaviour tagged with that level is in place.
 */
export const ZULIP_FEATURE_LEVEL = 496;
export const ZULIP_VERSION = '12.0-parley-0.1.0';
export const ZULIP_MERGE_BASE = '';
