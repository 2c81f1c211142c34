import { Payload } from './payload';
import { ignore, InvalidJsonError, post, type Integration, type WebhookInput } from './types';
import { MissingArgumentError } from '../errors';

/**
 * Slack-compatible incoming webhooks (`slack_incoming`): scripts and services
 * written for Slack's incoming webhooks post here unchanged. Slack takes the
 * message as a JSON body or as a form field `payload` holding JSON; both
 * work. The topic is the URL's `topic`, else the payload's `channel` without
 * its leading # or @, else none. The message is built from Block Kit
 * `blocks` (sections, headers, dividers, images, context; interactive
 * blocks are dropped), legacy `attachments` (title, pretext, text, fields,
 * image, footer, time), or failing both the plain `text` (after
 * `icon_emoji`); Slack's `<url|label>` links and its *bold* and _italic_
 * become Markdown. A payload with nothing to show posts nothing.
 */
export const slackIncoming: Integration = {
  name: 'slack_incoming',
  displayName: 'SlackIncoming',
  handle(input) {
    const payload = slackPayload(input);
    const channel = payload.opt('channel');
    const topic = channel ? channel.str().replace(/^[@#]/, '') : '(no topic)';
    const pieces: string[] = [];
    const blocks = payload.opt('blocks');
    if (blocks && blocks.list().length) pieces.push(...blocks.list().map(renderBlock));
    const attachments = payload.opt('attachments');
    if (attachments && attachments.list().length) pieces.push(...attachments.list().map(renderAttachment));
    let body = joinPieces(pieces);
    const text = payload.opt('text');
    if (body === '' && text && text.str()) {
      const emoji = payload.opt('icon_emoji');
      body = ((emoji && emoji.str() ? `${emoji.str()} ` : '') + text.str()).trim();
    }
    if (body === '') return ignore(null);
    return post(null, topic, replaceFormatting(replaceLinks(body).trim()));
  },
  docs: {
    title: 'Slack-compatible incoming webhook',
    summary: "Takes the messages of scripts and services written for Slack's incoming webhooks, unchanged.",
    setup: [
      'Wherever the tool asks for a Slack incoming-webhook URL, give it the URL below.',
      'Messages go to the channel of `stream`, under the `topic` of the URL or, without one, the `channel` the payload names.',
    ],
  },
};

/** Slack takes the payload as a JSON body, or as a form (or query) field `payload` holding JSON. */
function slackPayload(input: WebhookInput): Payload {
  const type = (input.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') return input.payload;
  const text = input.form?.payload ?? input.option('payload');
  if (text === undefined) throw new MissingArgumentError('payload');
  try {
    return new Payload(JSON.parse(text));
  } catch {
    throw new InvalidJsonError();
  }
}

const joinPieces = (pieces: string[]) =>
  pieces
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join('\n\n');

/** A Block Kit text object: `{type: plain_text|mrkdwn, text}`. */
const textOf = (block: Payload) => block.get('text').str();

function renderBlock(block: Payload): string {
  const type = block.get('type').str();
  switch (type) {
    case 'context': {
      const elements = block.opt('elements');
      if (!elements) return '';
      return joinPieces(elements.list().map((e) => (e.get('type').str() === 'image' ? renderElement(e) : textOf(e))));
    }
    case 'divider':
      return '----';
    case 'header':
      return `## ${textOf(block.get('text'))}`;
    case 'image': {
      const title = block.opt('title');
      const alt = title ? textOf(title) : block.get('alt_text').str();
      return `[${alt}](${block.get('image_url').str()})`;
    }
    case 'section': {
      const pieces: string[] = [];
      const text = block.opt('text');
      if (text) pieces.push(textOf(text));
      const accessory = block.opt('accessory');
      if (accessory) pieces.push(renderElement(accessory));
      const fields = block.opt('fields');
      if (fields) pieces.push(renderFields(fields.list().map(textOf)));
      return joinPieces(pieces);
    }
    default:
      // actions and input blocks are interactive: nothing to show.
      return '';
  }
}

/** One field as it is; several as a two-column table with a blank header row (no newlines or pipes in cells). */
function renderFields(fields: string[]): string {
  if (fields.length === 1) return fields[0]!;
  const cells = fields.map((f) => f.replace(/\n/g, ' ').replace(/\|/g, ' '));
  let table = '| | |\n|-|-|\n';
  for (let i = 0; i < cells.length; i += 2) table += `| ${cells[i]} | ${cells[i + 1] ?? ''} |\n`;
  return table;
}

/** Only images of Block Kit's elements can be shown; buttons and menus cannot. */
function renderElement(element: Payload): string {
  if (element.get('type').str() !== 'image') return '';
  return `[${element.get('alt_text').str()}](${element.get('image_url').str()})`;
}

function renderAttachment(attachment: Payload): string {
  const pieces: string[] = [];
  const field = (name: string) => {
    const v = attachment.opt(name);
    return v && v.raw !== '' && v.raw !== 0 && v.raw !== false ? v : null;
  };
  const title = field('title');
  if (title) {
    const link = field('title_link');
    pieces.push(link ? `## [${title.str()}](${link.str()})` : `## ${title.str()}`);
  }
  for (const name of ['pretext', 'text']) {
    const v = field(name);
    if (v) pieces.push(v.str());
  }
  const fields = attachment.opt('fields');
  if (fields) {
    const lines: string[] = [];
    for (const f of fields.list()) {
      const t = f.opt('title');
      const v = f.opt('value');
      const tt = t && t.str() ? t.str() : null;
      const vv = v && v.str() ? v.str() : null;
      if (tt && vv) lines.push(`*${tt}*: ${vv}`);
      else if (tt) lines.push(`*${tt}*`);
      else if (vv) lines.push(vv);
    }
    pieces.push(lines.join('\n'));
  }
  const blocks = field('blocks');
  if (blocks && blocks.list().length) pieces.push(...blocks.list().map(renderBlock));
  const image = field('image_url');
  if (image) pieces.push(`[](${image.str()})`);
  const footer = field('footer');
  if (footer) pieces.push(footer.str());
  const ts = field('ts');
  if (ts) pieces.push(`<time:${ts.int()}>`);
  return joinPieces(pieces);
}

/** Slack's `<https://…|label>` links as Markdown links. */
const replaceLinks = (text: string) => text.replace(/<(\w+?:\/\/.*?)\|(.*?)>/g, '[$2]($1)');

/** Slack's *bold* and _italic_ as Markdown's **bold** and *italic* (Unicode word characters, as Python's \w). */
function replaceFormatting(text: string): string {
  return text
    .replace(/([^\p{L}\p{N}_]|^)\*(?!\s+)([^*\n]+)(?<!\s)\*((?=[^\p{L}\p{N}_])|$)/gu, '$1**$2**$3')
    .replace(/([^\p{L}\p{N}_]|^)_(?!\s+)([^_\n]+)(?<!\s)_((?=[^\p{L}\p{N}_])|$)/gu, '$1*$2*$3');
}
