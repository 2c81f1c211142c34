import { parseCapabilities, type QueueOptions } from '../../src/events/options';

/** A queue's options as POST /register's defaults give them (every event type, Markdown on), for tests that register on a QueueManager directly. */
export const queueOptions = (userId: number, extra: Partial<QueueOptions> = {}): QueueOptions => ({
  userId,
  realmId: 1,
  eventTypes: null,
  narrow: [],
  applyMarkdown: true,
  clientGravatar: false,
  allPublicStreams: false,
  publicChannels: false,
  capabilities: parseCapabilities({}),
  ...extra,
});
