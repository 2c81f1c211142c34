import MarkdownIt from 'markdown-it';
import { Router } from 'express';
import { INTEGRATIONS } from '../integrations';
import { escapeHtml, sendPage, siteOf } from './site-pages';

/** Setup steps are short Markdown (code spans, links, emphasis); no HTML passes through. */
const md = new MarkdownIt({ html: false, linkify: false });

/**
 * The integrations page at /api/docs/integrations, beside the API
 * reference: for each incoming-webhook integration of the registry
 * (src/integrations/index.ts), what it posts, the URL to paste into the
 * service (this server's own address, the bot's API key and a channel to
 * fill in) and the steps in the service. Written from each integration's
 * `docs`, so a new integration documents itself.
 */
export function integrationsPageRouter(): Router {
  const router = Router();
  router.get('/', (req, res) => {
    const site = siteOf(req);
    const sections = [...INTEGRATIONS]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((i) => {
        const url = `${site}/api/v1/external/${i.name}?api_key=BOT_API_KEY&stream=CHANNEL`;
        const options = i.docs.options?.length
          ? `<p>Options, added to the URL as query parameters:</p>\n<ul>${i.docs.options
              .map((o) => `<li><code>${escapeHtml(o.name)}</code>: ${md.renderInline(o.description)}</li>`)
              .join('')}</ul>`
          : '';
        return `<section id="${escapeHtml(i.name)}">
<h2>${escapeHtml(i.docs.title ?? i.displayName)}</h2>
<p>${md.renderInline(i.docs.summary)}</p>
<pre>${escapeHtml(url)}</pre>
<ol>${i.docs.setup.map((s) => `<li>${md.renderInline(s)}</li>`).join('')}</ol>
${options}
</section>`;
      });
    sendPage(
      res,
      200,
      'Parley integrations',
      `<h1>Integrations</h1>
<p>Services post to Parley through incoming webhooks. Create an incoming-webhook bot (Personal settings → Bots, or
<code>POST /api/v1/bots</code> with <code>bot_type</code> 2), then give the service the URL of its integration below,
with the bot's API key in place of <code>BOT_API_KEY</code> and a channel name or ID in place of
<code>CHANNEL</code>. Without <code>stream</code>, the messages come to you as direct messages. Every integration also
takes <code>topic</code> (a topic of your choosing instead of the integration's) and <code>only_events</code> /
<code>exclude_events</code> (JSON lists of event types, with <code>*</code> wildcards).</p>
<nav><ul>${[...INTEGRATIONS]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((i) => `<li><a href="#${escapeHtml(i.name)}">${escapeHtml(i.docs.title ?? i.displayName)}</a></li>`)
        .join('')}</ul></nav>
${sections.join('\n')}`,
    );
  });
  return router;
}
