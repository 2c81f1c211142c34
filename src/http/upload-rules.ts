import type { OpId } from '../contract';
import { avatarTooLarge, MAX_AVATAR_FILE_SIZE_MIB, notOneAvatar } from '../domain/avatars';
import { imageTooLarge, MAX_ICON_FILE_SIZE_MIB, MAX_LOGO_FILE_SIZE_MIB, notOneIcon, notOneLogo } from '../domain/realm-images';
import { noFileToUpload } from '../domain/uploads';
import { ApiError } from '../errors';

const oneFileAtATime = () => new ApiError('You may only upload one file at a time');

/** How an operation that takes one file refuses a body without it, a second file, and a file over its limit. */
export interface UploadRules {
  fileBytes: number;
  noFile: () => ApiError;
  secondFile?: () => ApiError;
  tooLarge?: () => ApiError;
}

/**
 * Zulip's words differ by endpoint: POST /user_uploads has one message for
 * each case and the server's upload limit; an avatar has its own, smaller
 * limit and one message for both no file and several files.
 */
export function uploadRulesFor(operationId: string, maxFileUploadSizeMib: number): UploadRules {
  if ((operationId as OpId) === 'upload-avatar') {
    return { fileBytes: MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024, noFile: notOneAvatar, secondFile: notOneAvatar, tooLarge: avatarTooLarge };
  }
  if ((operationId as OpId) === 'add-bot' || (operationId as OpId) === 'update-bot') {
    // A bot's avatar is optional (the body may be a form); Zulip words a second file its own way here.
    return {
      fileBytes: MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024,
      noFile: notOneAvatar,
      secondFile: oneFileAtATime,
      tooLarge: avatarTooLarge,
    };
  }
  if ((operationId as OpId) === 'upload-realm-icon') {
    const tooLarge = () => imageTooLarge(MAX_ICON_FILE_SIZE_MIB);
    return { fileBytes: MAX_ICON_FILE_SIZE_MIB * 1024 * 1024, noFile: notOneIcon, secondFile: notOneIcon, tooLarge };
  }
  if ((operationId as OpId) === 'upload-realm-logo') {
    const tooLarge = () => imageTooLarge(MAX_LOGO_FILE_SIZE_MIB);
    return { fileBytes: MAX_LOGO_FILE_SIZE_MIB * 1024 * 1024, noFile: notOneLogo, secondFile: notOneLogo, tooLarge };
  }
  return { fileBytes: maxFileUploadSizeMib * 1024 * 1024, noFile: noFileToUpload };
}
