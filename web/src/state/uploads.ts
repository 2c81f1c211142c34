import { api, ok, type Schemas } from '../api/client';
import { realm } from './store';

/**
 * Files attached to a message: each is stored by POST /user_uploads (a
 * multipart body; the API client passes FormData through untouched, so the
 * browser writes the content type with its boundary) and linked in the text
 * as Zulip links uploads, `[name](url)`.
 */
export async function uploadFile(file: File): Promise<{ name: string; url: string }> {
  const limit = realm.value.maxFileUploadMib;
  if (limit !== null && file.size > limit * 1024 * 1024) {
    throw new Error(`it is larger than this organization's limit of ${limit} MiB.`);
  }
  const form = new FormData();
  form.append('file', file, file.name);
  const body = form as unknown as Schemas['UploadFileRequest'];
  const stored = await ok(api.POST('/user_uploads', { body }));
  return { name: stored.filename || file.name, url: stored.url };
}

/** A file's name as link text: square brackets would end the link, so they go (as Zulip strips them). */
export function linkText(name: string): string {
  return name.replace(/[[\]]/g, '');
}

/** The placeholder shown while a file uploads, unique so that several can be replaced each in turn. */
export function uploadingText(name: string, n: number): string {
  return `[Uploading ${linkText(name)}…${n > 1 ? ` (${n})` : ''}]()`;
}
