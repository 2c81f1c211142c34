import { emailButton, emailLayout } from './layout';
import { html, type EmailTemplate } from './template';

export interface InvitationData {
  /** Who sent the invitation, and their address (Zulip names both). */
  referrerName: string;
  referrerEmail: string;
  /** The organization's name and address. */
  realmName: string;
  realmUrl: string;
  /** The sign-up page's link. */
  link: string;
  /** When the link stops working, as a UTC date and time; null when it never does. */
  expiresAt: string | null;
}

/** Zulip's zerver/emails/invitation: who invited you to which organization, the link, when it expires. */
export const invitationEmail: EmailTemplate<InvitationData> = {
  name: 'invitation',
  languages: {
    en: (d) => {
      const expiry = d.expiresAt === null ? 'The link does not expire.' : `The link expires on ${d.expiresAt}.`;
      return {
        subject: `${d.referrerName} invited you to join ${d.realmName}`,
        text: [
          `Hi,`,
          ``,
          `${d.referrerName} (${d.referrerEmail}) has invited you to join ${d.realmName}, an organization on Parley at ${d.realmUrl}.`,
          ``,
          `To accept, open this link, choose your name and password:`,
          ``,
          d.link,
          ``,
          expiry,
          ``,
          `If you were not expecting this invitation, you can ignore this mail.`,
          ``,
        ].join('\n'),
        html: emailLayout(
          html`<p>Hi,</p>
            <p>
              ${d.referrerName} (<a href="mailto:${d.referrerEmail}">${d.referrerEmail}</a>) has invited you to join
              <strong>${d.realmName}</strong>, an organization on Parley at <a href="${d.realmUrl}">${d.realmUrl}</a>.
            </p>
            ${emailButton('Accept the invitation', d.link)}
            <p>${expiry}</p>`,
          html`If you were not expecting this invitation, you can ignore this mail.`,
        ),
      };
    },
  },
};
