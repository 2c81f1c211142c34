import { subscriberListMode } from '../access/subscriber-lists';
import type { Schema } from '../contract';
import { doSetEditTypingStatus, doSetTypingStatus } from '../actions/typing';
import { ApiError } from '../errors';
import { queueOptionsFor } from '../events/options';
import { buildInitialState, wantsUnreadState } from '../events/register/state';
import { doAdvanceUnreadHorizon } from '../actions/unread-horizon';
import { shapeEvents } from '../events/shape';
import { caller, HandlerTable } from '../http/handler';

export const eventHandlers: HandlerTable = {
  /**
   * The queue is made before the state is read, so a change committed
   * meanwhile is never lost: at worst the client gets an event for
   * something the state already shows (docs/adr/0005).
   */
  'register-queue': async ({ ctx, params: p, ...call }) => {
    const viewer = caller(call);
    const { user } = viewer;
    const opts = queueOptionsFor(user, p);
    const queue = ctx.queues.register(opts);
    const fetch = p.fetch_event_types ?? p.event_types;
    const fetchEventTypes = fetch ? new Set(fetch) : null;
    try {
      // Reading the unread state is when its scan above the horizon is bounded again (ADR 0024).
      if (wantsUnreadState(fetchEventTypes)) await doAdvanceUnreadHorizon(ctx.db, user);
      const state = await buildInitialState(ctx, viewer, {
        fetchEventTypes,
        includeSubscribers: subscriberListMode(p.include_subscribers),
        queue: opts,
        presence: { slim: p.slim_presence ?? false, historyLimitDays: p.presence_history_limit_days },
      });
      return { queue_id: queue.id, last_event_id: -1, ...state };
    } catch (err) {
      ctx.queues.delete(user.id, queue.id);
      throw err;
    }
  },

  'get-events': async ({ ctx, params: p, res, ...call }) => {
    const user = caller(call).user;
    // Zulip requires it whenever queue_id is given (its legacy queue-less form is not offered).
    if (p.last_event_id === undefined) throw new ApiError("Missing 'last_event_id' argument");
    // The response closing before we answer means the client went away: stop waiting for it.
    const gone = new AbortController();
    const onClose = () => gone.abort();
    res.on('close', onClose);
    try {
      const { events, opts } = await ctx.queues.poll(user.id, p.queue_id, p.last_event_id, p.dont_block ?? false, gone.signal);
      // The bus carries open records (src/events/bus.ts ServerEvent) until every publisher builds
      // contract events (EventBody); until then this is where the list is taken to be the contract's.
      const shaped = (await shapeEvents(ctx.caches.users.lookup, user, opts, events)) as Array<Schema<'Event'>>;
      return { events: shaped, queue_id: p.queue_id };
    } finally {
      res.off('close', onClose);
    }
  },

  'delete-queue': async ({ ctx, params, ...call }) => {
    ctx.queues.delete(caller(call).user.id, params.queue_id);
    return {};
  },

  'set-typing-status': async ({ ctx, params, ...call }) => {
    return doSetTypingStatus(ctx, caller(call), params);
  },

  'set-typing-status-for-message-edit': async ({ ctx, params, ...call }) => {
    return doSetEditTypingStatus(ctx, caller(call), params);
  },
};
