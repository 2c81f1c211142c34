/**
 * The interface languages Zulip offers, by code, each named in itself (the
 * language_name a default_language change carries to clients).
 */
export const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  ar: 'العربية',
  be: 'Беларуская',
  bg: 'Български',
  bn: 'বাংলা',
  ca: 'Català',
  cs: 'Čeština',
  cy: 'Cymraeg',
  da: 'Dansk',
  de: 'Deutsch',
  el: 'Ελληνικά',
  en: 'English',
  en_GB: 'British English',
  eo: 'Esperanto',
  es: 'Español',
  fa: 'فارسی',
  fi: 'Suomi',
  fr: 'Français',
  gl: 'Galego',
  gu: 'ગુજરાતી',
  hi: 'हिंदी',
  hu: 'Magyar',
  id: 'Bahasa Indonesia',
  it: 'Italiano',
  ja: '日本語',
  ko: '한국어',
  lt: 'Lietuviškai',
  lv: 'Latviešu',
  ml: 'മലയാളം',
  mn: 'Монгол',
  nl: 'Nederlands',
  no: 'Norsk',
  pl: 'Polski',
  pt: 'Português',
  pt_BR: 'Português Brasileiro',
  pt_PT: 'Português (Portugal)',
  ro: 'Română',
  ru: 'Русский',
  si: 'සිංහල',
  sk: 'Slovenčina',
  sr: 'Српски',
  sv: 'Svenska',
  ta: 'தமிழ்',
  te: 'తెలుగు',
  tl: 'Tagalog',
  tr: 'Türkçe',
  uk: 'Українська',
  uz: 'O‘zbek',
  vi: 'Tiếng Việt',
  'zh-hans': '简体中文',
  'zh-hant': '繁體中文',
  zh_TW: '中文 (台灣)',
};

export const isLanguageCode = (code: string) => Object.hasOwn(LANGUAGE_NAMES, code);

/** Whether Node's time zone database knows the name (IANA names and their links, such as US/Eastern). */
export function isKnownTimeZone(name: string): boolean {
  if (name === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
