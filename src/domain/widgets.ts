import { ApiError } from '../errors';

/**
 * Widgets (polls, to-do lists) as Zulip builds them: a message whose content
 * starts with /poll, /todo or /rsvp gets a first submessage describing the
 * widget; clients then send its updates as more submessages.
 */
export type WidgetType = 'poll' | 'todo' | 'rsvp';
const WIDGET_TYPES: readonly string[] = ['poll', 'todo', 'rsvp'];

/** The first submessage of a widget: its type and what the command preset (Zulip's extra_data of each). */
export type WidgetDefinition =
  | { widget_type: 'poll'; extra_data: { question: string; options: string[] } }
  | { widget_type: 'rsvp'; extra_data: { topic: string; datetime: string; invitees: number[] } }
  | { widget_type: 'todo'; extra_data: { task_list_title: string; tasks: Array<{ task: string; desc: string }> } };

/** A list line's text without its bullet ("- ", "* ") or leading space. */
const listItem = (line: string) => line.trim().replace(/^\s*[-*]?\s*/, '');

/** The widget a message's content asks for, with what its command line and the lines below preset. */
export function widgetFromContent(content: string): WidgetDefinition | null {
  const command = content.split(/\s+/)[0] ?? '';
  if (!command.startsWith('/')) return null;
  const type = command.slice(1);
  if (!WIDGET_TYPES.includes(type)) return null;
  const lines = content.replace(command, '').split(/\r\n|\r|\n/);
  const first = lines.length > 0 && lines[0] !== '' ? lines.shift()!.trim() : '';
  const items = lines.map(listItem).filter((l) => l.length > 0);
  if (type === 'poll') return { widget_type: 'poll', extra_data: { question: first, options: items } };
  if (type === 'rsvp') return { widget_type: 'rsvp', extra_data: { topic: '', datetime: '', invitees: [] } };
  const tasks = items.map((item) => {
    const cut = item.indexOf(': ');
    return cut < 0 ? { task: item.trim(), desc: '' } : { task: item.slice(0, cut).trim(), desc: item.slice(cut + 2).trim() };
  });
  return { widget_type: 'todo', extra_data: { task_list_title: first, tasks } };
}

/** The widget type a stored widget definition names (null when it is not one Zulip clients know). */
export function widgetTypeOf(definition: string | undefined): string | null {
  if (definition === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(definition);
    const type = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>).widget_type : undefined;
    return typeof type === 'string' ? type : null;
  } catch {
    return null;
  }
}

/** Zulip's limit on poll option and task indexes (its clients use the same). */
const MAX_IDX = 1000;

type Check = (name: string, value: unknown) => void;
const str: Check = (name, v) => {
  if (typeof v !== 'string') throw new ApiError(`${name} is not a string`);
};
const bool: Check = (name, v) => {
  if (typeof v !== 'boolean') throw new ApiError(`${name} is not a boolean`);
};
const intRange: Check = (name, v) => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ApiError(`${name} is not an integer`);
  if (v < 0) throw new ApiError(`${name} is too small`);
  if (v > MAX_IDX) throw new ApiError(`${name} is too large`);
};
const vote: Check = (name, v) => {
  if (v !== 1 && v !== -1) throw new ApiError(`Invalid ${name}`);
};

/** Exactly these keys, each passing its check (Zulip's check_dict_only wording). */
function exactly(what: string, data: Record<string, unknown>, checks: Record<string, Check>): void {
  for (const [key, check] of Object.entries(checks)) {
    if (!Object.hasOwn(data, key)) throw new ApiError(`${key} key is missing from ${what}`);
    check(`${what}["${key}"]`, data[key]);
  }
  const extra = Object.keys(data).filter((k) => !Object.hasOwn(checks, k));
  if (extra.length) throw new ApiError(`Unexpected arguments: ${extra.join(', ')}`);
}

function typed(what: string, data: unknown): Record<string, unknown> & { type: string } {
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new ApiError(`${what} is not a dict`);
  const d = data as Record<string, unknown>;
  if (!Object.hasOwn(d, 'type')) throw new ApiError(`type key is missing from ${what}`);
  str(`${what}["type"]`, d.type);
  return d as Record<string, unknown> & { type: string };
}

/** A poll update: votes and new options from anyone; only the author edits the question. */
export function checkPollData(data: unknown, isAuthor: boolean): void {
  const d = typed('poll data', data);
  if (d.type === 'vote') return exactly('poll data', d, { type: str, key: str, vote });
  if (d.type === 'question') {
    if (!isAuthor) throw new ApiError("You can't edit a question unless you are the author.");
    return exactly('poll data', d, { type: str, question: str });
  }
  if (d.type === 'new_option') return exactly('poll data', d, { type: str, option: str, idx: intRange });
  throw new ApiError(`Unknown type for poll data: ${d.type}`);
}

/** A to-do list update: tasks and strikes from anyone; only the author renames the list. */
export function checkTodoData(data: unknown, isAuthor: boolean): void {
  const d = typed('todo data', data);
  if (d.type === 'new_task') return exactly('todo data', d, { type: str, key: intRange, task: str, desc: str, completed: bool });
  if (d.type === 'strike') return exactly('todo data', d, { type: str, key: str });
  if (d.type === 'new_task_list_title') {
    if (!isAuthor) throw new ApiError("You can't edit the task list title unless you are the author.");
    return exactly('todo data', d, { type: str, title: str });
  }
  throw new ApiError(`Unknown type for todo data: ${d.type}`);
}
