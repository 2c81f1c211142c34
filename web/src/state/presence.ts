import { api, ok } from '../api/client';
import { presence } from './store';

/**
 * Telling the server the user is here: POST /users/me/presence every
 * minute while the page is visible, as Zulip's web app does — "active" when
 * the window has focus, "idle" otherwise. The answer carries everyone's
 * presence, which refreshes the signal between presence events.
 */
const INTERVAL_MS = 60_000;
let timer: ReturnType<typeof setInterval> | null = null;

async function report(): Promise<void> {
  if (document.visibilityState !== 'visible') return;
  const r = await ok(
    api.POST('/users/me/presence', {
      body: { status: document.hasFocus() ? 'active' : 'idle', ping_only: false, new_user_input: true, slim_presence: true },
    }),
  );
  if (!r.presences) return;
  const seen = new Map(presence.value);
  for (const [id, p] of Object.entries(r.presences)) {
    if ('active_timestamp' in p) seen.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
  }
  presence.value = seen;
}

export function startPresence(): void {
  if (timer) return;
  const tick = () => void report().catch(() => undefined);
  tick();
  timer = setInterval(tick, INTERVAL_MS);
  // Coming back to the page reports at once rather than up to a minute later.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') tick();
  });
}
