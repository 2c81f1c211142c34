import { emailButton, emailLayout } from './layout';
import { html, type EmailTemplate, type RenderedEmail } from './template';

interface PasswordResetCommon {
  /** The address the request named, as typed. */
  email: string;
  realmName: string;
  realmUrl: string;
}

/**
 * One template, two mails, as Zulip's password_reset: the link, to an
 * active account of the organization; or, to an address with none there,
 * a note saying so (naming a deactivated account, and the organizations
 * where the address does have one), so the form itself never tells.
 */
export type PasswordResetData = PasswordResetCommon &
  (
    | { kind: 'reset'; resetUrl: string; validHours: number }
    | {
        kind: 'no-account';
        /** The address had an account here, now deactivated. */
        deactivated: boolean;
        /** The URLs of other organizations of this server where the address has an active account. */
        otherRealmUrls: string[];
      }
  );

/** The sentences of the mail in one language. */
interface Wording {
  subject(realmName: string): string;
  intro(email: string, realmUrl: string): string;
  openLink: string;
  button: string;
  validFor(hours: number): string;
  ignoreReset: string;
  deactivated(email: string, realmUrl: string, realmName: string): string;
  noAccount(email: string, realmName: string): string;
  elsewhere: string;
  ignore: string;
}

const ENGLISH: Wording = {
  subject: (realm) => `Password reset for ${realm}`,
  intro: (email, url) => `Someone (perhaps you) asked to reset the password of the account ${email} at ${url}.`,
  openLink: 'To choose a new password, open this link:',
  button: 'Reset password',
  validFor: (hours) => `The link works once, for ${hours} hours.`,
  ignoreReset: 'If you did not ask for this, you can ignore this email: nothing changes until the link is used.',
  deactivated: (email, url, realm) =>
    `The account ${email} at ${url} has been deactivated. An administrator of ${realm} can reactivate it.`,
  noAccount: (email, realm) => `There is no account with the address ${email} in ${realm}.`,
  elsewhere: 'This address has an account in these organizations, where you can log in or reset the password:',
  ignore: 'If you did not ask for this, you can ignore this email.',
};

const GERMAN: Wording = {
  subject: (realm) => `Passwort zurücksetzen für ${realm}`,
  intro: (email, url) => `Jemand (vielleicht Sie) hat verlangt, das Passwort des Kontos ${email} auf ${url} zurückzusetzen.`,
  openLink: 'Um ein neues Passwort zu wählen, öffnen Sie diesen Link:',
  button: 'Passwort zurücksetzen',
  validFor: (hours) => `Der Link funktioniert einmal, ${hours} Stunden lang.`,
  ignoreReset:
    'Wenn Sie das nicht verlangt haben, können Sie diese E-Mail ignorieren: Nichts ändert sich, solange der Link nicht benutzt wird.',
  deactivated: (email, url, realm) =>
    `Das Konto ${email} auf ${url} wurde deaktiviert. Ein Administrator von ${realm} kann es wieder aktivieren.`,
  noAccount: (email, realm) => `In ${realm} gibt es kein Konto mit der Adresse ${email}.`,
  elsewhere: 'Diese Adresse hat ein Konto in den folgenden Organisationen, wo Sie sich anmelden oder das Passwort zurücksetzen können:',
  ignore: 'Wenn Sie das nicht verlangt haben, können Sie diese E-Mail ignorieren.',
};

function rendering(w: Wording): (d: PasswordResetData) => RenderedEmail {
  return (d) => {
    const subject = w.subject(d.realmName);
    const intro = w.intro(d.email, d.realmUrl);
    if (d.kind === 'reset') {
      const valid = w.validFor(d.validHours);
      return {
        subject,
        text: `${intro}\n\n${w.openLink}\n${d.resetUrl}\n\n${valid}\n\n${w.ignoreReset}\n`,
        html: emailLayout(
          html`<p>${intro}</p>
            <p>${valid}</p>
            ${emailButton(w.button, d.resetUrl)}
            <p>${w.ignoreReset}</p>`,
        ),
      };
    }
    const why = d.deactivated ? w.deactivated(d.email, d.realmUrl, d.realmName) : w.noAccount(d.email, d.realmName);
    const others = d.otherRealmUrls.length ? `${w.elsewhere}\n${d.otherRealmUrls.join('\n')}` : '';
    return {
      subject,
      text: [intro, why, others, w.ignore].filter(Boolean).join('\n\n') + '\n',
      html: emailLayout(
        html`<p>${intro}</p>
          <p>${why}</p>
          ${
            d.otherRealmUrls.length
              ? html`<p>${w.elsewhere}</p>
                  <ul>
                    ${d.otherRealmUrls.map((u) => html`<li><a href="${u}">${u}</a></li>`)}
                  </ul>`
              : ''
          }
          <p>${w.ignore}</p>`,
      ),
    };
  };
}

export const passwordResetEmail: EmailTemplate<PasswordResetData> = {
  name: 'password_reset',
  languages: { en: rendering(ENGLISH), de: rendering(GERMAN) },
};
