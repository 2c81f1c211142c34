import type { Data } from '../contract';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../domain/version';
import type { RealmRow } from '../queries/rows';
import { realmIconUrl } from './realm-images';

/**
 * GET /server_settings for the organization a host addresses: the
 * version, the login methods (passwords only, when the organization allows
 * them) and how the organization presents itself. `descriptionHtml` is the
 * description rendered (serializers render no Markdown themselves).
 */
export function toApiServerSettings(
  realm: RealmRow,
  url: string,
  descriptionHtml: string,
  pushNotificationsEnabled: boolean,
): Data<'get-server-settings'> {
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
    // As POST /register's realm_push_notifications_enabled: whether a push relay is configured.
    push_notifications_enabled: pushNotificationsEnabled,
    is_incompatible: false,
    email_auth_enabled: realm.password_auth_enabled,
    require_email_format_usernames: true,
    realm_uri: url,
    realm_url: url,
    realm_name: realm.name,
    realm_icon: realmIconUrl(realm),
    realm_description: descriptionHtml,
    realm_web_public_access_enabled: realm.enable_spectator_access,
  };
}
