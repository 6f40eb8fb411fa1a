// A project readme is markdown; project information also answers it as HTML. marked renders it
// and sanitize-html keeps only harmless markup (no scripts, event handlers or javascript: links),
// so the HTML can be shown as is. Rendered once, when the readme changes.
//
// Whoever opens the readme must not be tracked: an image from elsewhere (a tracking pixel) would
// tell its host who read the project and when, so only images carried in the readme itself
// (`data:` URIs) stay; the others leave their alt text. Links tell their target nothing either
// (no referrer), give it no hold on our page (no opener) and no ranking (nofollow).
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { tooDeeplyNestedLine } from '../../domain/shared/markdownNesting';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const INLINE_IMAGE = /^data:image\//i;

const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'del', 'input'],
  allowedAttributes: {
    ...sanitizeHtml.defaults.allowedAttributes,
    img: ['src', 'alt', 'title', 'width', 'height'],
    a: ['href', 'title', 'rel'],
    code: ['class'],
    input: ['type', 'checked', 'disabled'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['data'] },
  allowProtocolRelative: false,
  transformTags: {
    img: (tagName, attribs) =>
      INLINE_IMAGE.test(attribs.src ?? '') ? { tagName, attribs } : { tagName: 'span', attribs: {}, text: attribs.alt ?? '' },
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow' } }),
  },
};

export function readmeHtml(markdown: string): string {
  // Stored before nesting was bounded: shown as the text it is, the same on every thread and run.
  if (tooDeeplyNestedLine(markdown) !== null) return sanitizeHtml(`<pre>${escapeHtml(markdown)}</pre>`, ALLOWED);
  const html = marked.parse(markdown, { async: false, gfm: true });
  return sanitizeHtml(html, ALLOWED);
}
