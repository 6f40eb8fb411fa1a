// A project readme is markdown; project information also answers it as HTML. marked renders it
// and sanitize-html keeps only harmless markup (no scripts, event handlers or javascript: links),
// so the HTML can be shown as is. Rendered once, when the readme changes.
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';

const ALLOWED = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'del', 'input'],
  allowedAttributes: {
    ...sanitizeHtml.defaults.allowedAttributes,
    img: ['src', 'alt', 'title', 'width', 'height'],
    a: ['href', 'title'],
    code: ['class'],
    input: ['type', 'checked', 'disabled'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
};

export function readmeHtml(markdown: string): string {
  const html = marked.parse(markdown, { async: false, gfm: true });
  return sanitizeHtml(html, ALLOWED);
}
