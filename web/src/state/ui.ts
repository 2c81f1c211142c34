import { signal } from '@preact/signals';
import { focusRequest, setTarget, startDirectMessage } from './compose';
import { channelName } from './store';

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
 * conversation, or a new direct message (state/compose.ts sets the
 * recipient and asks the box for the focus).
 */
export type ComposeRequest =
  { kind: 'topic'; channelId: number; topic: string } | { kind: 'dm'; userIds: number[] } | { kind: 'new-dm' } | { kind: 'current' };

export function requestCompose(r: ComposeRequest): void {
  if (r.kind === 'topic') {
    setTarget({ kind: 'channel', channel: channelName(r.channelId), topic: r.topic });
    focusRequest.value += 1;
  } else if (r.kind === 'dm') startDirectMessage(r.userIds);
  else if (r.kind === 'new-dm') startDirectMessage();
  else focusRequest.value += 1;
}
