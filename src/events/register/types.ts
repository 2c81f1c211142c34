import type { Data } from '../../contract';

/**
 * The shapes the parts of the initial state share. They live apart from
 * state.ts, which assembles the parts, so that a part naming its own shape
 * does not import the module that imports it.
 */

/** What POST /register answers: the success body without the envelope. */
export type RegisterData = Data<'register-queue'>;
/** The initial state: the register response without the new queue's fields. */
export type InitialState = Omit<RegisterData, 'queue_id' | 'last_event_id'>;
/** One part of the initial state: these keys of the register response, every one of them present. */
export type StatePart<K extends keyof RegisterData> = Required<Pick<RegisterData, K>>;
