import type { InvitationData } from './invitation';
import { emailButton, emailLayout } from './layout';
import { html, type EmailTemplate } from './template';

/**
 * Zulip's zerver/emails/invitation_reminder: sent two days before an
 * invitation expires, unless it was used or revoked first.
 */
export const invitationReminderEmail: EmailTemplate<InvitationData> = {
  name: 'invitation_reminder',
  languages: {
    en: (d) => {
      const expiry = d.expiresAt === null ? '' : ` It expires on ${d.expiresAt}.`;
      return {
        subject: `Reminder: ${d.referrerName} invited you to join ${d.realmName}`,
        text: [
          `Hi again,`,
          ``,
          `${d.referrerName} (${d.referrerEmail}) invited you to join ${d.realmName} on Parley at ${d.realmUrl}, and the invitation is still open.${expiry}`,
          ``,
          `To accept, open this link, choose your name and password:`,
          ``,
          d.link,
          ``,
          `If you do not want to join, you can ignore this mail.`,
          ``,
        ].join('\n'),
        html: emailLayout(
          html`<p>Hi again,</p>
            <p>
              ${d.referrerName} (<a href="mailto:${d.referrerEmail}">${d.referrerEmail}</a>) invited you to join
              <strong>${d.realmName}</strong> on Parley at <a href="${d.realmUrl}">${d.realmUrl}</a>, and the invitation is still
              open.${expiry}
            </p>
            ${emailButton('Accept the invitation', d.link)}`,
          html`If you do not want to join, you can ignore this mail.`,
        ),
      };
    },
  },
};
