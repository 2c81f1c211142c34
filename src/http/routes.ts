import { avatarHandlers } from '../handlers/avatars';
import { authHandlers } from '../handlers/auth';
import { eventHandlers } from '../handlers/events';
import { healthHandlers } from '../handlers/health';
import { channelHandlers } from '../handlers/channels';
import { messageHandlers } from '../handlers/messages';
import { pushHandlers } from '../handlers/push';
import { presenceHandlers } from '../handlers/presence';
import { serverHandlers } from '../handlers/server';
import { realmHandlers } from '../handlers/realm';
import { savedSnippetHandlers } from '../handlers/saved-snippets';
import { draftHandlers } from '../handlers/drafts';
import { attachmentHandlers } from '../handlers/attachments';
import { markReadHandlers } from '../handlers/mark-read';
import { uploadHandlers } from '../handlers/uploads';
import { userGroupHandlers } from '../handlers/user-groups';
import { userHandlers } from '../handlers/users';
import { userTopicHandlers } from '../handlers/user-topics';
import { customEmojiHandlers } from '../handlers/custom-emoji';
import { profileFieldHandlers } from '../handlers/profile-fields';
import { linkifierHandlers } from '../handlers/linkifiers';
import { mutedUserHandlers } from '../handlers/muted-users';
import { botHandlers } from '../handlers/bots';
import { scheduledMessageHandlers } from '../handlers/scheduled-messages';
import { reminderHandlers } from '../handlers/reminders';
import { botStorageHandlers } from '../handlers/bot-storage';
import { inviteHandlers } from '../handlers/invites';
import { sessionHandlers } from '../handlers/sessions';
import type { HandlerTable, OpId } from './handler';

/** operationId → handler. Every operation of openapi/ is here or in PENDING_OPERATIONS. */
export const HANDLERS: HandlerTable = {
  ...serverHandlers,
  ...userHandlers,
  ...userGroupHandlers,
  ...inviteHandlers,
  ...sessionHandlers,
  ...realmHandlers,
  ...authHandlers,
  ...messageHandlers,
  ...eventHandlers,
  ...channelHandlers,
  ...savedSnippetHandlers,
  ...draftHandlers,
  ...attachmentHandlers,
  ...markReadHandlers,
  ...pushHandlers,
  ...uploadHandlers,
  ...healthHandlers,
  ...presenceHandlers,
  ...userTopicHandlers,
  ...avatarHandlers,
  ...customEmojiHandlers,
  ...profileFieldHandlers,
  ...linkifierHandlers,
  ...mutedUserHandlers,
  ...botHandlers,
  ...scheduledMessageHandlers,
  ...reminderHandlers,
  ...botStorageHandlers,
};

/**
 * Operations the contract already describes whose handlers are still to be
 * built; they answer 501 NOT_IMPLEMENTED. A test fails when an operation is
 * in neither list, or in both.
 */
export const PENDING_OPERATIONS: readonly OpId[] = [];
