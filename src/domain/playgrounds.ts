/**
 * Code playgrounds: external sites where a code block of one language can
 * be opened (Zulip's RealmPlayground). The checks are Zulip's, in its order.
 */
import { ApiError } from '../errors';
import { ModelValidationError } from './linkifiers';
import { parseUrlTemplate } from './url-template';

/** Zulip's RealmPlayground.MAX_PYGMENTS_LANGUAGE_LENGTH. */
export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
/** Zulip has no limit on a playground's name; a Parley limit. */
export const MAX_PLAYGROUND_NAME_LENGTH = 200;
export const MAX_PLAYGROUND_URL_TEMPLATE_LENGTH = 1000;

/**
 * The language may be any name a code block may carry, not only a
 * Pygments lexer (so a playground can serve a custom language): letters,
 * digits, space and _ + - . / #.
 */
const PYGMENTS_LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;

/** A playground as stored and sent (Zulip's RealmPlaygroundDict). */
export interface Playground {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

/**
 * The view's own check of pygments_language, on the value as sent (before
 * stripping): its length, then its characters. Plain errors, without the
 * `errors` map of a model validation.
 */
export function checkPygmentsLanguageParam(value: string): void {
  if ([...value].length > MAX_PYGMENTS_LANGUAGE_LENGTH) {
    throw new ApiError(`pygments_language is too long (limit: ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters)`);
  }
  if (!PYGMENTS_LANGUAGE.test(value)) throw new ApiError('Invalid characters in pygments language');
}

/**
 * Zulip's RealmPlayground.full_clean on the stripped values: the fields in
 * the model's order (url_template, name, pygments_language), then the
 * model's check that `code` is the template's one variable (only for a
 * valid template), then uniqueness of (language, name), which the caller
 * reports with `taken`.
 */
export function checkPlayground(p: { name: string; pygments_language: string; url_template: string }, taken: boolean): void {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const template = p.url_template.length > MAX_PLAYGROUND_URL_TEMPLATE_LENGTH ? null : parseUrlTemplate(p.url_template);
  if (p.url_template === '') add('url_template', 'This field cannot be blank.');
  else if (p.url_template.length > MAX_PLAYGROUND_URL_TEMPLATE_LENGTH) {
    add(
      'url_template',
      `Ensure this value has at most ${MAX_PLAYGROUND_URL_TEMPLATE_LENGTH} characters (it has ${p.url_template.length}).`,
    );
  } else if (!template) add('url_template', 'Invalid URL template.');
  if (p.name === '') add('name', 'This field cannot be blank.');
  else if ([...p.name].length > MAX_PLAYGROUND_NAME_LENGTH) {
    add('name', `Ensure this value has at most ${MAX_PLAYGROUND_NAME_LENGTH} characters (it has ${[...p.name].length}).`);
  }
  if (p.pygments_language === '') add('pygments_language', 'This field cannot be blank.');
  if (template) {
    if (!template.variables.includes('code')) add('__all__', 'Missing the required variable "code" in the URL template');
    else if (template.variables.length !== 1) add('__all__', '"code" should be the only variable present in the URL template');
  }
  if (taken && !errors.name && !errors.pygments_language) {
    add('__all__', 'Realm playground with this Realm, Pygments language and Name already exists.');
  }
  if (Object.keys(errors).length) throw new ModelValidationError(errors);
}
