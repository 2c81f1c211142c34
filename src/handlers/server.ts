import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../domain/version';
import { ApiError } from '../errors';
import type { HandlerTable } from '../http/handler';
import { getRealmForHost } from '../access/addressed-realm';
import { renderMarkdown } from '../markdown/render';

export const serverHandlers: HandlerTable = {
  'get-server-settings': async ({ ctx, req }) => {
    const realm = await getRealmForHost(ctx.db, req.headers.host);
    if (!realm) throw new ApiError('There is no organization at this address.', 'BAD_REQUEST', 404);
    const url = ctx.config.externalUrl;
    return {
      authentication_methods: {
        password: realm.password_auth_enabled,
        dev: false,
        email: realm.password_auth_enabled,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        'openid connect': false,
      },
      external_authentication_methods: [],
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: ZULIP_MERGE_BASE,
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: realm.password_auth_enabled,
      require_email_format_usernames: true,
      realm_uri: url,
      realm_url: url,
      realm_name: realm.name,
      realm_icon: `${url}/static/images/icon.png`,
      realm_description: renderMarkdown(realm.description),
      realm_web_public_access_enabled: realm.enable_spectator_access,
    };
  },
};
