const timeFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
const dateFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' });

export function timeOf(seconds: number): string {
  return timeFormat.format(new Date(seconds * 1000));
}

export function dateOf(seconds: number): string {
  return dateFormat.format(new Date(seconds * 1000));
}
