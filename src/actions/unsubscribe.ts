import type { AppContext } from '../context';
import { findUnsubscriber, UNSUBSCRIBE_KINDS, type UnsubscribeKind } from './missed-message-emails';
import { doUpdateSettings } from './settings';

export type UnsubscribeOutcome =
  { ok: true; realmName: string; what: string } | { ok: false; reason: 'unknown_kind' | 'bad_token' | 'deactivated' };

/**
 * A one-click unsubscribe link (Zulip's email_unsubscribe): the kind of
 * mail it names is turned off for the link's user, through the settings
 * action, so it is audited and the user's clients get the user_settings
 * update event as if the user had changed it in the app. A link whose
 * setting is already off changes nothing and says the same.
 */
export async function doUnsubscribe(ctx: AppContext, kind: string, token: string): Promise<UnsubscribeOutcome> {
  if (!Object.hasOwn(UNSUBSCRIBE_KINDS, kind)) return { ok: false, reason: 'unknown_kind' };
  const { setting, what } = UNSUBSCRIBE_KINDS[kind as UnsubscribeKind];
  const found = await findUnsubscriber(ctx.db, kind, token);
  if (!found) return { ok: false, reason: 'bad_token' };
  if (!found.user.is_active || found.realm.deactivated) return { ok: false, reason: 'deactivated' };
  await doUpdateSettings(ctx, found.user, { [setting]: false });
  return { ok: true, realmName: found.realm.name, what };
}
