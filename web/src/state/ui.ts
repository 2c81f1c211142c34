import { signal } from '@preact/signals';

/**
 * What is open on the page besides the narrow: the selected message (the
 * one keyboard shortcuts act on), and the menus, cards and drawers, so that
 * shortcuts and Escape can reach them from anywhere.
 */
export const selectedId = signal<number | null>(null);
export const topicMenu = signal<{ channelId: number; topic: string } | null>(null);
export const userCard = signal<number | null>(null);
export const sidebarOpen = signal(false);
export const helpOpen = signal(false);
/** A message whose actions menu is open, optionally straight into editing it. */
export const actingOn = signal<{ id: number; edit: boolean } | null>(null);

/** Set by the message list while it is drawn: scrolls to a message, or to the newest. */
export const listControl: { scrollTo: (messageId: number) => void; toBottom: () => void } = {
  scrollTo: () => undefined,
  toBottom: () => undefined,
};

/**
 * What a shortcut asks of the compose box: write in a topic, to a
 * conversation, or a new direct message. The compose box may follow this
 * signal to set its recipient; until it does, the shortcuts focus its text.
 */
export type ComposeRequest =
  { kind: 'topic'; channelId: number; topic: string } | { kind: 'dm'; userIds: number[] } | { kind: 'new-dm' } | { kind: 'current' };
export const composeRequest = signal<(ComposeRequest & { at: number }) | null>(null);

export function requestCompose(r: ComposeRequest): void {
  composeRequest.value = { ...r, at: Date.now() };
  const text = document.getElementById('compose-content');
  if (text instanceof HTMLTextAreaElement) text.focus();
}
