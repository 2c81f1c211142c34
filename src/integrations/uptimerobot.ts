import type { Payload } from './payload';
import { MisconfiguredPayloadError, post, unsupportedEvent, type Integration } from './types';

/**
 * UptimeRobot: an alert contact of type Webhook POSTs a JSON body the user
 * writes in UptimeRobot's form from its *variables* (monitorFriendlyName,
 * alertTypeFriendlyName, …), under the snake_case keys the setup below
 * gives. Posted: a monitor going Down or coming back Up, under the topic of
 * the monitor's friendly name (events `down`, `up`). Any other alert type
 * (SSL expiry, …) is an unsupported event. No options.
 *
 * Zulip answers a body missing one of the fields a message needs with a
 * plain "Invalid payload" (and tells the bot's owner their UptimeRobot
 * setup is wrong), not the usual error naming the field; the alert type
 * itself is read before that check, so its absence gets the usual error.
 */
export const uptimerobot: Integration = {
  name: 'uptimerobot',
  displayName: 'UptimeRobot',
  handle(input) {
    const p = input.payload;
    const alertType = p.get('alert_type_friendly_name').str();
    if (alertType !== 'Up' && alertType !== 'Down') throw unsupportedEvent(alertType);
    const name = field(p, 'monitor_friendly_name');
    const url = field(p, 'monitor_url');
    const details = field(p, 'alert_details');
    if (alertType === 'Up') {
      const duration = field(p, 'alert_friendly_duration');
      return post('up', name, `${name} (${url}) is back UP (${details}).\nIt was down for ${duration}.`);
    }
    return post('down', name, `${name} (${url}) is DOWN (${details}).`);
  },
  docs: {
    summary: 'Posts when an UptimeRobot monitor goes down or comes back up, under a topic named after the monitor.',
    setup: [
      'In UptimeRobot, open **My Settings** (or **Integrations**) and add an alert contact of type **Webhook**.',
      'Give it a friendly name, and set **URL to notify** to the URL below.',
      'Choose to send the POST value as JSON (`application/json`), and set the **POST value** to: ' +
        '`{"monitor_url":"*monitorURL*","monitor_friendly_name":"*monitorFriendlyName*","alert_type":"*alertType*",' +
        '"alert_type_friendly_name":"*alertTypeFriendlyName*","alert_details":"*alertDetails*",' +
        '"alert_friendly_duration":"*alertFriendlyDuration*"}`',
      'Save it, then add the alert contact to the monitors it should report on.',
    ],
  },
};

const misconfigured = (botName: string) =>
  `Your bot ${botName} received an UptimeRobot request without data the integration needs. The body of the ` +
  "alert contact's webhook is written by hand in UptimeRobot: check that it sends every field of the setup " +
  '(monitor_url, monitor_friendly_name, alert_type, alert_type_friendly_name, alert_details, alert_friendly_duration).';

/** A string field of the user-written body; anything else is Zulip's generic "Invalid payload". */
function field(p: Payload, key: string): string {
  const value = p.opt(key)?.raw;
  if (typeof value !== 'string') throw new MisconfiguredPayloadError('Invalid payload', misconfigured);
  return value;
}
