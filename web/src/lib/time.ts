import { settings } from '../state/store';

/**
 * Times as the user asked for them: twelve- or twenty-four-hour clock by
 * their twenty_four_hour_time setting, in the browser's locale.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function format(key: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(undefined, options);
    formats.set(key, f);
  }
  return f;
}

export function timeOf(seconds: number, timeZone?: string): string {
  const h24 = settings.value.twenty_four_hour_time === true;
  return format(`t${h24 ? 24 : 12}${timeZone ?? ''}`, {
    hour: 'numeric',
    minute: '2-digit',
    hourCycle: h24 ? 'h23' : 'h12',
    timeZone,
  }).format(new Date(seconds * 1000));
}

export function dateOf(seconds: number): string {
  return format('d', { weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' }).format(new Date(seconds * 1000));
}

/** The calendar day of a time, to tell when the date changes between two messages. */
export function dayOf(seconds: number): string {
  const d = new Date(seconds * 1000);
  return `${d.getFullYear()}-${d.getMonth()}-${d.getDate()}`;
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "5 minutes ago", "yesterday", … */
export function ago(seconds: number, now = Date.now() / 1000): string {
  const diff = seconds - now;
  const abs = Math.abs(diff);
  if (abs < 60) return relative.format(Math.round(diff), 'second');
  if (abs < 3600) return relative.format(Math.round(diff / 60), 'minute');
  if (abs < 86400) return relative.format(Math.round(diff / 3600), 'hour');
  if (abs < 86400 * 30) return relative.format(Math.round(diff / 86400), 'day');
  return dateOf(seconds);
}
