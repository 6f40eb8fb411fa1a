import { ValidationError } from './errors';

// Markdown nests blocks (quotes, lists) by what starts a line, and the renderer descends once per
// level: a readme of a thousand nested levels overflows its stack, and a few hundred nested lists
// take it seconds to minutes. The prefix of block markers and indentation a line may have is
// therefore bounded; a readme is refused past it, and one already stored is shown as plain text.

/** Characters of a line's block prefix: indentation, quote and list markers (tabs count as four). */
export const MARKDOWN_PREFIX_MAX = 64;

const BLOCK_PREFIX = /^[ \t>*+\-0-9.)]*/;

/** The 1-based number of the first line whose block prefix is too long, or null. */
export function tooDeeplyNestedLine(markdown: string): number | null {
  let line = 1;
  let start = 0;
  while (start <= markdown.length) {
    const end = markdown.indexOf('\n', start);
    const text = markdown.slice(start, end === -1 ? markdown.length : end);
    const prefix = BLOCK_PREFIX.exec(text)![0];
    const width = prefix.length + 3 * (prefix.split('\t').length - 1);
    if (width > MARKDOWN_PREFIX_MAX) return line;
    if (end === -1) break;
    start = end + 1;
    line += 1;
  }
  return null;
}

/** The markdown, or a ValidationError naming the field and the line. */
export function refuseDeepNesting(markdown: string, field: string): string {
  const line = tooDeeplyNestedLine(markdown);
  if (line !== null) throw new ValidationError(`${field}: line ${line} nests too deeply (at most ${MARKDOWN_PREFIX_MAX} characters of indentation, quote and list markers)`);
  return markdown;
}
