/**
 * Mail templates: pure functions from a template's data to a subject, a
 * plain-text part and an HTML part, one rendering per language. A template
 * names English (`en`), which is what a language it lacks falls back to, so
 * every mail goes out in the recipient's language setting as soon as a
 * translation exists, and in English until then.
 */

/** HTML that is safe to place as is: built only by `html` below (or `trustedHtml` for a literal). */
export class SafeHtml {
  private constructor(readonly value: string) {}
  /** @internal */
  static of(value: string): SafeHtml {
    return new SafeHtml(value);
  }
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

type HtmlValue = string | number | SafeHtml | readonly SafeHtml[] | null | undefined | false;

/**
 * A tagged template that escapes every interpolated value unless it is
 * SafeHtml already (a nested `html` fragment, or a list of them).
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += htmlValue(v) + strings[i + 1]!;
  });
  return SafeHtml.of(out);
}

function htmlValue(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map((x: SafeHtml) => x.value).join('');
  return escapeHtml(String(v));
}

/** HTML from a source that produced it safely already (a message's rendered Markdown). */
export function trustedHtml(s: string): SafeHtml {
  return SafeHtml.of(s);
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: SafeHtml;
}

export type Rendering<D> = (data: D) => RenderedEmail;

export interface EmailTemplate<D> {
  /** What kind of mail: stored with the queued mail (logs, metrics, tests). */
  name: string;
  /** One rendering per language code (Zulip's default_language values); English is required. */
  languages: { en: Rendering<D> } & Partial<Record<string, Rendering<D>>>;
}

/** The rendering for `language` (a regional code falls back to its language, then English). */
export function renderEmail<D>(template: EmailTemplate<D>, language: string, data: D): RenderedEmail {
  const base = language.split(/[-_]/)[0]!;
  const render = template.languages[language] ?? template.languages[base] ?? template.languages.en;
  return render(data);
}
