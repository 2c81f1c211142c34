import { emailLayout } from './layout';
import { html, trustedHtml, type EmailTemplate, type RenderedEmail, type SafeHtml } from './template';

/**
 * The missed-message email (Zulip's zerver/emails/missed_message): the
 * messages of one conversation that a user was sent, or mentioned in, while
 * away, and still has not read (src/actions/missed-message-emails.ts).
 */

/** The conversation the mail is about: a channel's topic, a one-to-one or a group direct message. */
export type MissedConversation =
  { kind: 'channel'; channel: string; topic: string } | { kind: 'direct'; sender: string } | { kind: 'group'; others: string[] };

export interface MissedMessage {
  sender: string;
  /** The message as rendered for the web (rendered_content, links made absolute). */
  html: string;
  /** The message's Markdown source: the plain-text part. */
  text: string;
}

export interface MissedMessagesData {
  realmName: string;
  /** The organization's name in the subject (realm_name_in_email_notifications_policy). */
  realmNameInSubject: boolean;
  conversation: MissedConversation;
  /** What caused it: a mention of some kind (personal, group, wildcard), or else the conversation alone. */
  mentioned: boolean;
  /** The group whose mention it was, when a group's alone. */
  mentionedGroup: string | null;
  /** Who sent the messages that caused it, in order of first message. */
  senders: string[];
  /** The messages, oldest first; null when the user (or the organization) keeps message content out of mail. */
  messages: MissedMessage[] | null;
  /** How many messages the mail is about. */
  messageCount: number;
  /** Opens the conversation in the organization. */
  conversationUrl: string;
  /** Turns these mails off in one click. */
  unsubscribeUrl: string;
  /** The notification settings. */
  settingsUrl: string;
}

/**
 * Rendered messages link within the site ("/user_uploads/…", "/#narrow/…",
 * "#narrow/…"): in a mail those must name the organization's URL.
 */
export function absoluteLinks(rendered: string, site: string): string {
  return rendered.replace(
    /\b(href|src)="(\/(?!\/)|#)/g,
    (_all, attr: string, start: string) => `${attr}="${site}/${start === '#' ? '#' : ''}`,
  );
}

/** "A and B", "A, B and C", "A, B and 3 others": who else is in a group direct message. */
export function groupName(others: readonly string[]): string {
  if (others.length <= 1) return others.join('');
  if (others.length <= 3) return `${others.slice(0, -1).join(', ')} and ${others[others.length - 1]}`;
  return `${others.slice(0, 2).join(', ')} and ${others.length - 2} others`;
}

function conversationName(c: MissedConversation): string {
  if (c.kind === 'channel') return `#${c.channel} > ${c.topic}`;
  if (c.kind === 'direct') return `direct messages with ${c.sender}`;
  return `group direct messages with ${groupName(c.others)}`;
}

/**
 * The subject names the conversation, as Zulip's does (mail clients thread
 * by it): the channel and topic, or the people of a direct message; with
 * the content kept out of mail, nothing of it either.
 */
function subjectOf(d: MissedMessagesData): string {
  let subject: string;
  if (d.messages === null) subject = d.conversation.kind === 'channel' ? 'New messages' : 'New direct messages';
  else if (d.conversation.kind === 'channel') subject = `#${d.conversation.channel} > ${d.conversation.topic}`;
  else if (d.conversation.kind === 'direct') subject = `DMs with ${d.conversation.sender}`;
  else subject = `Group DMs with ${groupName(d.conversation.others)}`;
  return d.realmNameInSubject ? `${subject} [${d.realmName}]` : subject;
}

/** One sentence on why the mail came. */
function leadOf(d: MissedMessagesData): string {
  const who = d.senders.join(', ');
  if (d.messages === null) {
    return d.mentioned ? `You were mentioned in ${d.realmName} while you were away.` : `You have new messages in ${d.realmName}.`;
  }
  if (d.conversation.kind === 'direct')
    return `${d.conversation.sender} sent you ${d.messageCount === 1 ? 'a direct message' : 'direct messages'}.`;
  if (d.conversation.kind === 'group') return `New messages in your ${conversationName(d.conversation)}.`;
  if (d.mentioned && d.mentionedGroup !== null) return `${who} mentioned @${d.mentionedGroup} in ${conversationName(d.conversation)}.`;
  if (d.mentioned) return `${who} mentioned you in ${conversationName(d.conversation)}.`;
  return `New messages in ${conversationName(d.conversation)}.`;
}

function hiddenNote(d: MissedMessagesData): string {
  return `The content of messages is not included in email notifications. Open ${d.realmName} to read ${d.messageCount === 1 ? 'it' : 'them'}.`;
}

function renderEn(d: MissedMessagesData): RenderedEmail {
  const lead = leadOf(d);
  const text = [lead, ''];
  if (d.messages === null) text.push(hiddenNote(d), '');
  else for (const m of d.messages) text.push(`${m.sender}:`, m.text, '');
  text.push(`Open the conversation: ${d.conversationUrl}`, '');
  text.push('--', `You are getting this email because you were away from ${d.realmName}.`);
  text.push(`Turn these emails off: ${d.unsubscribeUrl}`, `Notification settings: ${d.settingsUrl}`);

  const messages: SafeHtml =
    d.messages === null
      ? html`<p style="color:#555">${hiddenNote(d)}</p>`
      : html`${d.messages.map(
          (m) =>
            html`<div style="border-left:3px solid #ddd;padding:4px 12px;margin:12px 0">
              <div style="font-weight:bold">${m.sender}</div>
              <div>${trustedHtml(m.html)}</div>
            </div>`,
        )}`;
  const body = html`<p>${lead}</p>
    ${messages}
    <p><a href="${d.conversationUrl}">Open the conversation</a></p>`;
  const footer = html`You are getting this email because you were away from ${d.realmName}.
    <a href="${d.unsubscribeUrl}">Turn these emails off</a> · <a href="${d.settingsUrl}">Notification settings</a>`;
  return { subject: subjectOf(d), text: text.join('\n') + '\n', html: emailLayout(body, footer) };
}

export const missedMessagesEmail: EmailTemplate<MissedMessagesData> = {
  name: 'missed_messages',
  languages: { en: renderEn },
};
