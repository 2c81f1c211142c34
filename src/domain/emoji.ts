/**
 * Where the server serves the names of the Unicode emoji it accepts, as
 * Zulip's server_emoji_data_url document `{"code_to_names": {...}}`
 * (src/http/emoji-data.ts): outside /api, like Zulip's static files, and
 * without credentials.
 */
export const EMOJI_DATA_PATH = '/static/generated/emoji/emoji_api.json';
