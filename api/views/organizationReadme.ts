// An organization keeps its readme as markdown, and its information answers the HTML too. Rendering
// (marked, then sanitize-html) grows with the text: about a second of CPU for the 100,000 characters a
// readme may hold. A project's readme is rendered once, by its projection; an organization's is
// rendered here once per text and kept, rather than at every GET of the organization.
import { createHash } from 'node:crypto';
import { readmeHtml } from '../../projections/projects/readmeHtml';

/** Readmes kept, the least recently answered dropped first: at most ~230 KB of HTML each. */
const KEPT = 64;
const kept = new Map<string, string>();

export function organizationReadmeHtml(markdown: string): string {
  const key = createHash('sha256').update(markdown).digest('base64');
  const html = kept.get(key);
  if (html !== undefined) {
    // Map order is insertion order: move it to the newest end.
    kept.delete(key);
    kept.set(key, html);
    return html;
  }
  const fresh = readmeHtml(markdown);
  kept.set(key, fresh);
  if (kept.size > KEPT) kept.delete(kept.keys().next().value!);
  return fresh;
}
