import { emailButton, emailLayout } from './layout';
import { html, type EmailTemplate } from './template';

export interface ConfirmRegistrationData {
  email: string;
  realmName: string;
  realmUrl: string;
  /** The sign-up page's link, for this address. */
  link: string;
  /** How long the link works, in hours. */
  validHours: number;
}

/**
 * Zulip's zerver/emails/confirm_registration: an address given on a
 * reusable invitation link's page is confirmed by mail before any account
 * has it, so nobody takes someone else's address.
 */
export const confirmRegistrationEmail: EmailTemplate<ConfirmRegistrationData> = {
  name: 'confirm_registration',
  languages: {
    en: (d) => ({
      subject: `Confirm your email address for ${d.realmName}`,
      text: [
        `Hi,`,
        ``,
        `Someone (probably you) asked to join ${d.realmName}, an organization on Parley at ${d.realmUrl}, as ${d.email}.`,
        ``,
        `To confirm this address and choose your name and password, open this link:`,
        ``,
        d.link,
        ``,
        `The link works for ${d.validHours} hours. If you did not ask to join, you can ignore this mail.`,
        ``,
      ].join('\n'),
      html: emailLayout(
        html`<p>Hi,</p>
          <p>
            Someone (probably you) asked to join <strong>${d.realmName}</strong>, an organization on Parley at
            <a href="${d.realmUrl}">${d.realmUrl}</a>, as ${d.email}.
          </p>
          ${emailButton('Confirm and sign up', d.link)}
          <p>The link works for ${d.validHours} hours.</p>`,
        html`If you did not ask to join, you can ignore this mail.`,
      ),
    }),
  },
};
