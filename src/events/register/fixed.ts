import { INTEGRATIONS } from '../../integrations';
import type { Integration } from '../../integrations/types';
import type { InitialState } from './types';

/**
 * The parts of the initial state for kinds of objects Parley does not have
 * (navigation views, default channel groups...) or features it does not
 * offer (video calls, GIF pickers, billing): Zulip's value for a user and
 * organization that have none, keyed by the event type that owns the keys.
 * Clients that require a key then find it. Each call builds new objects:
 * nothing is shared between responses.
 */
export const FIXED_PARTS = {
  onboarding_steps: () => ({ onboarding_steps: [], navigation_tour_video_url: null }),
  navigation_views: () => ({ navigation_views: [] }),
  // The legacy form: always empty since feature level 176, even on servers with linkifiers.
  realm_filters: () => ({ realm_filters: [] }),
  realm_billing: () => ({ realm_billing: { has_pending_sponsorship_request: false } }),
  realm_embedded_bots: () => ({ realm_embedded_bots: [] }),
  // Not fixed: the integrations this server has (src/integrations), for the web app's bot form.
  realm_incoming_webhook_bots: () => ({ realm_incoming_webhook_bots: INTEGRATIONS.map(toApiIncomingWebhookType) }),
  default_stream_groups: () => ({ realm_default_stream_groups: [] }),
  // Zulip lists PostgreSQL's English stop words here; Parley's search (src/domain/search.ts) drops no word.
  stop_words: () => ({ stop_words: [] }),
  video_calls: () => ({ has_zoom_token: false }),
  giphy: () => ({ giphy_api_key: '' }),
  tenor: () => ({ tenor_api_key: '' }),
} satisfies Record<string, () => Partial<InitialState>>;

/** An integration as register's realm_incoming_webhook_bots lists it (Zulip's WebhookIntegration). */
function toApiIncomingWebhookType(i: Integration) {
  return {
    name: i.name,
    display_name: i.docs.title ?? i.displayName,
    all_event_types: i.eventTypes ? [...i.eventTypes] : null,
    config_options: [],
    url_options: (i.docs.options ?? []).map((o) => ({
      key: o.name,
      label: o.description,
      validator: o.boolean ? 'check_bool' : 'check_string',
    })),
  };
}
