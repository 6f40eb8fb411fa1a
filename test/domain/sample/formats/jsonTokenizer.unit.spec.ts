// The tokenizer's strings, however the bytes are cut, are the ones JSON.parse reads: short ASCII
// runs skip the decoder, so runs that mix ASCII, multi-byte sequences and escapes, cut anywhere,
// must come out the same.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DocumentSink, Scalar } from '../../../../domain/sample/formats/documentEvents';
import { JsonTokenizer } from '../../../../domain/sample/formats/jsonTokenizer';

function stringsOf(bytes: Buffer, cuts: readonly number[]): string[] {
  const seen: string[] = [];
  const text = (scalar: Scalar) => (typeof scalar === 'object' && scalar !== null && scalar.kind === 'string' ? scalar.text : undefined);
  const sink: DocumentSink = {
    beginObject() {},
    endObject() {},
    beginArray() {},
    endArray() {},
    key(name) {
      seen.push(`key:${name.text}`);
    },
    nonTextKey() {},
    tag() {},
    value(scalar) {
      const s = text(scalar);
      if (s !== undefined) seen.push(`value:${s}`);
    },
    stringStart() {},
    stringEnd() {},
  };
  const tokenizer = new JsonTokenizer(sink);
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    tokenizer.write(bytes.subarray(from, cut));
    from = cut;
  }
  tokenizer.write(bytes.subarray(from));
  tokenizer.end();
  return seen;
}

const expected = (strings: readonly [string, string][]) => strings.flatMap(([k, v]) => [`key:${k}`, `value:${v}`]);

describe('JSON strings through the tokenizer', () => {
  it('equal what JSON.parse reads, whatever the strings hold and wherever the chunks are cut', () => {
    const piece = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ maxLength: 80 }), fc.constantFrom('é', '✓', '𝄞', 'µm/s²', 'accX'));
    const text = fc.array(piece, { maxLength: 4 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(text, text), { selector: ([k]) => k, minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (pairs, rawCuts) => {
          const json = Buffer.from(JSON.stringify(Object.fromEntries(pairs)), 'utf8');
          const cuts = [...new Set(rawCuts.map((c) => c % (json.length + 1)))];
          // Only what JSON.parse gives back: a key like "__proto__" is kept as an own key by both.
          const parsed = Object.entries(JSON.parse(json.toString('utf8')) as Record<string, string>);
          expect(stringsOf(json, cuts)).toEqual(expected(parsed));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('reads an ASCII run that a cut ends on the first byte of a multi-byte sequence', () => {
    const json = Buffer.from('{"abcé✓":"xyz𝄞w"}', 'utf8');
    for (let cut = 1; cut < json.length; cut++) expect(stringsOf(json, [cut]), `cut at ${cut}`).toEqual(['key:abcé✓', 'value:xyz𝄞w']);
  });
});
