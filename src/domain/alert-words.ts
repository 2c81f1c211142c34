import { ApiError } from '../errors';

/** Zulip's limit on one alert word. */
export const MAX_ALERT_WORD_LENGTH = 100;

/**
 * Parley's limit on a user's alert words, all requests together (Zulip has
 * none): every message sent to the user is searched for each of them, so an
 * unbounded list made each send to them cost more (100,000 words: 2 s). A
 * request may carry as many (the contract's maxItems).
 */
export const MAX_ALERT_WORDS_PER_USER = 1000;

/** The refusal of an addition that would take the user past MAX_ALERT_WORDS_PER_USER. */
export function checkAlertWordCount(total: number): void {
  if (total > MAX_ALERT_WORDS_PER_USER) {
    throw new ApiError(`You may have at most ${MAX_ALERT_WORDS_PER_USER} alert words; remove some first.`);
  }
}

/**
 * The words of a request: trimmed, empty ones dropped, none longer than
 * Zulip allows (its message names the word's index).
 */
export function checkAlertWords(words: readonly string[]): string[] {
  words.forEach((w, i) => {
    if ([...w].length > MAX_ALERT_WORD_LENGTH) {
      throw new ApiError(`alert_words[${i}] is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`);
    }
  });
  return words.map((w) => w.trim()).filter((w) => w !== '');
}

/** Words to add: those the user does not have yet, ignoring case, each once. */
export function newAlertWords(existing: readonly string[], wanted: readonly string[]): string[] {
  const seen = new Set(existing.map((w) => w.toLowerCase()));
  const out: string[] = [];
  for (const w of wanted) {
    if (seen.has(w.toLowerCase())) continue;
    seen.add(w.toLowerCase());
    out.push(w);
  }
  return out;
}

// Zulip's AlertWordNotificationProcessor: a word counts when the characters
// around it are the start or end of the content, whitespace, or one of these.
// Zulip's "after" set lists '",' as one two-character entry, which never
// matches a single character, so a closing double quote does not end a word;
// Parley keeps that quirk so the same messages are flagged.
const BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const AFTER = new Set([' ', '\n', ')', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

/**
 * Whether the message's Markdown source contains the word, case-insensitively, on Zulip's
 * boundaries. `lowered` is the content lower-cased once by the caller for all its words
 * (lowering it per word made a user with 100,000 words cost 2 s per message).
 */
export function containsAlertWord(lowered: string, word: string): boolean {
  const text = lowered;
  const needle = word.toLowerCase();
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if ((at === 0 || BEFORE.has(text[at - 1]!)) && (end >= text.length || AFTER.has(text[end]!))) return true;
  }
  return false;
}
