import { html, type SafeHtml } from './template';

/**
 * The frame every HTML mail shares: inline styles only (mail clients drop
 * <style> and external sheets), no images, no script.
 */
export function emailLayout(body: SafeHtml, footer?: SafeHtml): SafeHtml {
  return html`<!DOCTYPE html>
    <html>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width" />
      </head>
      <body
        style="margin:0;padding:24px;background:#f5f5f5;font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#222;line-height:1.5"
      >
        <div style="max-width:600px;margin:0 auto;background:#fff;border-radius:6px;padding:24px">${body}</div>
        ${footer ? html`<div style="max-width:600px;margin:12px auto 0;font-size:12px;color:#777">${footer}</div>` : ''}
      </body>
    </html> `;
}

/** A button-looking link, with its address also written out for clients that hide links. */
export function emailButton(label: string, url: string): SafeHtml {
  return html`<p>
      <a href="${url}" style="display:inline-block;background:#4b68c8;color:#fff;padding:10px 18px;border-radius:4px;text-decoration:none"
        >${label}</a
      >
    </p>
    <p style="font-size:13px;color:#555">Or open this address: <a href="${url}">${url}</a></p>`;
}
