import { Router, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { getSitePageRealm } from '../access/site-pages';

/**
 * The few HTML pages outside the API, for a person who opens the server's
 * address in a browser: `/` names the organization and points to the apps,
 * the API reference and the "forgot password" form
 * (src/http/password-reset-pages.ts) (the sign-up pages an invitation opens
 * are src/http/signup-pages.ts's); any other path that is not the API's a
 * small 404 page, not Express's default.
 * The API's own paths keep answering JSON (src/app.ts mounts these last).
 */
export function sitePagesRouter(db: Knex, config: Pick<Config, 'externalUrl'>): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const realm = await getSitePageRealm(db, req.headers.host, config.externalUrl);
    if (!realm) {
      return sendPage(res, 404, 'Parley', `<h1>Parley</h1>\n<p>There is no organization at this address.</p>`);
    }
    const site = siteOf(req);
    const name = escapeHtml(realm.name);
    sendPage(
      res,
      200,
      realm.name,
      `<h1>${name}</h1>
<p>${name} chats on Parley, a server of the Zulip API: the Zulip mobile app and zulip-terminal connect to it.</p>
<ul>
<li><a href="https://zulip.com/apps/">Get a Zulip app</a> and log in at <code>${escapeHtml(site)}</code> with your email and password
(<a href="/login/">check them here</a>). <a href="/accounts/password/reset/">Forgot your password?</a></li>
<li><a href="/api/docs">The API reference</a>, where you can try each operation, and <a href="/api/v1/openapi.json">its OpenAPI document</a>.</li>
</ul>`,
    );
  });
  // Last: whatever no router above answered and is not under /api (which answers JSON).
  router.use((_req, res) => {
    sendPage(
      res,
      404,
      'Page not found',
      `<h1>Page not found</h1>\n<p>Nothing is at this address. <a href="/">The organization's page</a>.</p>`,
    );
  });
  return router;
}

/** The address the visitor used, which is the one they can reach. */
export function siteOf(req: Request): string {
  return `${req.protocol}://${req.headers.host ?? 'localhost'}`;
}

/**
 * No script, no resource from anywhere: the only style is the page's own
 * <style> element, and forms (sign-up, password reset) post only to this
 * server.
 */
const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export function sendPage(res: Response, status: number, title: string, body: string): void {
  res.status(status);
  res.setHeader('Content-Security-Policy', PAGE_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-cache');
  res.type('html').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;line-height:1.5}pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}label{display:block;margin:.75rem 0 .25rem}input[type=text],input[type=email],input[type=password]{width:100%;max-width:24rem;padding:.4rem;font:inherit}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}.error{color:#b00020}</style>
</head>
<body>
${body}
</body>
</html>
`);
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
