import express, { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { getSitePageRealm } from '../access/site-pages';
import type { RealmRow } from '../queries/rows';
import { sendPage } from './site-pages';

/** What the HTML pages with forms share (login, password reset). */

/** A router for form pages (`/login` and `/login/` alike), and the body parser of their posts. */
export function formPagesRouter(): { router: Router; form: express.RequestHandler } {
  return { router: Router({ strict: false }), form: express.urlencoded({ extended: false, limit: '16kb' }) };
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
