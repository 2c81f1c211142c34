import express, { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { getSitePageRealm } from '../access/site-pages';
import type { RealmRow } from '../queries/rows';
import { sendPage } from './site-pages';

/** What the HTML pages with forms share (login, password reset). */

/** A router for form pages (`/login` and `/login/` alike), and the body parser of their posts. */
export function formPagesRouter(): { router: Router; form: express.RequestHandler } {
  return { router: Router({ strict: false }), form: pageForm() };
}

/**
 * The body parser of a page's form post, which first refuses a post sent
 * from another site. A login or sign-up form posted by another site's page
 * would log the visitor into an account of that site's choosing (login
 * CSRF), which Django's CSRF check stops on Zulip's forms. These forms come
 * before any session, so the check is the one browsers make possible
 * without a token: every browser sends `Origin` with a form post, and
 * current ones `Sec-Fetch-Site`; a post with neither (curl, a script) is no
 * browser's and carries no visitor's cookies.
 */
export function pageForm(): express.RequestHandler {
  const parse = express.urlencoded({ extended: false, limit: '16kb' });
  return (req, res, next) => {
    if (isCrossSite(req)) return crossSiteFormPage(res);
    parse(req, res, next);
  };
}

function isCrossSite(req: Request): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    // `Origin: null` (a sandboxed frame, a privacy-sensitive redirect) names no site: refused.
    return true;
  }
}

/** The answer to a form posted from another site (and to a wrong token on logout). */
export function crossSiteFormPage(res: Response): void {
  sendPage(
    res,
    403,
    'Forbidden',
    `<h1>Forbidden</h1>\n<p>The form's security check failed (CSRF). Reload this site's page and try again.</p>`,
  );
}

/** The organization the page's host addresses; none (or a deactivated one): the 404 page is sent and undefined returned. */
export async function pageRealm(ctx: AppContext, req: Request, res: Response): Promise<RealmRow | undefined> {
  const realm = await getSitePageRealm(ctx.db, req.headers.host, ctx.config.externalUrl);
  if (!realm) noOrganization(res);
  return realm;
}

/** A form field as one string (a repeated field: its first value; a missing one: empty). */
export function formField(req: Request, name: string): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const value = body[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : '';
}

/** The page for a host that addresses no active organization. */
export function noOrganization(res: Response): void {
  sendPage(res, 404, 'Parley', `<h1>Parley</h1>\n<p>There is no organization at this address.</p>`);
}
