import { api, ok } from '../api/client';
import { TypingNotifier } from '../lib/typing';
import { realm } from './store';

/**
 * The user's own typing notices (POST /typing), for a channel's topic or a
 * direct conversation. A notice that fails is not worth an error on screen:
 * it only means others miss "is typing…" for a moment.
 */
export type TypingTo = { type: 'channel'; stream_id: number; topic: string } | { type: 'direct'; to: number[] };

export const typingNotifier = new TypingNotifier<TypingTo>(
  (op, to) => {
    void ok(api.POST('/typing', { body: { op, ...to } })).catch(() => undefined);
  },
  () => ({ startedWaitMs: realm.value.typingStartedWaitMs, stoppedWaitMs: realm.value.typingStoppedWaitMs }),
);

// Leaving the page ends typing too.
window.addEventListener('pagehide', () => typingNotifier.stop());
