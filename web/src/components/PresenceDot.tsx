import { presence } from '../state/store';

/** Zulip's rule: active within the last 140 seconds is active, within a day idle, else offline. */
const ACTIVE_SECONDS = 140;

export function presenceOf(userId: number): 'active' | 'idle' | 'offline' {
  const p = presence.value.get(userId);
  const now = Date.now() / 1000;
  if (p && now - p.active < ACTIVE_SECONDS) return 'active';
  if (p && now - Math.max(p.idle, p.active) < ACTIVE_SECONDS) return 'idle';
  return 'offline';
}

export function PresenceDot({ userId }: { userId: number }) {
  const state = presenceOf(userId);
  return <span class={`presence ${state}`} role="img" aria-label={state} />;
}
