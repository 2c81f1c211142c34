/** "/user_uploads/<path_id>" in message content: a reference to an uploaded file. */
const UPLOAD_PATH = /\/user_uploads\/([^\s()<>"'[\]]+)/g;

/** The upload path ids content references; the scan runs only when the content names /user_uploads/ at all. */
export function referencedUploads(content: string): string[] {
  if (!content.includes('/user_uploads/')) return [];
  return [...new Set([...content.matchAll(UPLOAD_PATH)].map((m) => decodeSafely(m[1]!)))];
}

function decodeSafely(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
