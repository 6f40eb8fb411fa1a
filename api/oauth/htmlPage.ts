// The authorization server's pages for a person: plain HTML, every value escaped, nothing loaded
// from anywhere, forms posting only to this origin, never framed or cached.
import type Koa from 'koa';

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
};

/** Answers a whole page; `body` is HTML already escaped by its maker. */
export function sendPage(ctx: Koa.Context, status: number, title: string, body: string): void {
  ctx.status = status;
  ctx.set(PAGE_HEADERS);
  ctx.type = 'html';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
