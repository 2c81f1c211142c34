/**
 * Compile-time checks of the messages family against the contract, run by
 * `tsc --noEmit` (make typecheck), never executed. Each `@ts-expect-error`
 * fails the type check the day the line under it compiles, that is, the day
 * the contract stops holding the code to it.
 */
import type { Data, Schema } from '../../src/contract';
import type { PublishedEvent } from '../../src/events/shape';
import type { HandlerTable } from '../../src/http/handler';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// The serializers return the contract's wire objects, not a look-alike.
type Serializers = typeof import('../../src/serializers/messages');
export const messageIsTheContracts: Equal<ReturnType<Serializers['renderMessageDict']>, Schema<'Message'>> = true;
export const reactionIsTheContracts: Equal<ReturnType<Serializers['toApiReaction']>, Schema<'Reaction'>> = true;
type Flags = typeof import('../../src/domain/flags');
export const flagsAreTheContracts: Equal<ReturnType<Flags['flagsToApi']>, Array<Schema<'MessageFlag'>>> = true;

declare const message: Schema<'Message'>;
const { sender_id: _senderId, ...withoutSender } = message;
// @ts-expect-error sender_id is required: a serializer that dropped it would not compile.
export const incomplete: Schema<'Message'> = withoutSender;

// A handler's return is checked against the operation's success body.
export const handlers: HandlerTable = {
  // @ts-expect-error GET /messages/{message_id} returns raw_content beside the message.
  'get-message': async () => ({ message }),
  // @ts-expect-error POST /messages returns the new message's id.
  'send-message': async () => ({}),
};
export const getMessage: Data<'get-message'> = { message, raw_content: '' };

// Events are built as their schemas (less the queue's id).
// @ts-expect-error a typing event names its sender.
export const typing: PublishedEvent<Schema<'TypingEvent'>> = { type: 'typing', op: 'start', message_type: 'direct' };
export const flag: PublishedEvent<Schema<'UpdateMessageFlagsEvent'>> = {
  type: 'update_message_flags',
  op: 'add',
  operation: 'add',
  // @ts-expect-error update_message_flags carries only the contract's flags, never bookkeeping bits.
  flag: 'is_private',
  messages: [],
  all: false,
};
