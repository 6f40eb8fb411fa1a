// The memory read store's direct update path against mingo, the reference it stands in for: over
// generated documents and updates, whenever the direct path takes an update it must give mingo's
// document and mingo's "changed", and it must never touch the document it was given.
import fc from 'fast-check';
import { update as mingoUpdate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { copyDoc } from '../../stores/readstore/documents/plainObjects';
import { applyPlainUpdate } from '../../stores/readstore/plainUpdate';
import type { Document, Update } from '../../stores/readstore/readStore';

// Stored documents and the projections' updates are plain objects (mingo alone tells null-prototype objects apart).
const key = fc.constantFrom('a', 'b', 'c', 'n');
const path = fc.array(key, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
const scalar = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('x', 'y', true, null), fc.double({ noNaN: true, min: -10, max: 10 }));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(key, tie('v'), { maxKeys: 3, noNullPrototype: true })),
})).v;
const doc = fc.dictionary(key, value, { maxKeys: 4, noNullPrototype: true }).map((fields) => ({ _id: 1, ...fields }) as Document);
const update = fc
  .record(
    {
      $set: fc.dictionary(path, value, { maxKeys: 2, noNullPrototype: true }),
      $inc: fc.dictionary(path, fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constant(0)), { maxKeys: 2, noNullPrototype: true }),
      $push: fc.dictionary(path, value, { maxKeys: 1, noNullPrototype: true }),
      $unset: fc.dictionary(path, fc.constant(''), { maxKeys: 1, noNullPrototype: true }),
    },
    { requiredKeys: [] },
  )
  .filter((u) => Object.values(u).some((fields) => Object.keys(fields).length > 0)) as fc.Arbitrary<Update>;

/** mingo's result, or the error it throws. */
function byMingo(original: Document, u: Update): { doc: Document; changed: boolean } | { error: true } {
  const doc = copyDoc(original);
  try {
    const changed = mingoUpdate(doc, u as Parameters<typeof mingoUpdate>[1], undefined, undefined, { cloneMode: 'deep' });
    return { doc: copyDoc(doc), changed: changed.length > 0 };
  } catch {
    return { error: true };
  }
}

describe('applyPlainUpdate', () => {
  it('gives what mingo gives, whenever it takes the update, and leaves its input alone', () => {
    let taken = 0;
    fc.assert(
      fc.property(doc, update, (original, u) => {
        const before = structuredClone(original);
        const plain = applyPlainUpdate(original, u);
        expect(original).toEqual(before);
        if (!plain) return;
        taken++;
        const reference = byMingo(original, u);
        expect(reference).not.toHaveProperty('error');
        if ('error' in reference) return;
        expect(plain.changed).toBe(reference.changed);
        expect(copyDoc(plain.next)).toEqual(reference.doc);
      }),
      { numRuns: Number(process.env.PLAIN_UPDATE_RUNS ?? 3000) },
    );
    // The generators must exercise the direct path, not only the fallback.
    expect(taken).toBeGreaterThan(1000);
  });

  it('leaves to mingo what it does not handle', () => {
    const d: Document = { _id: 1, list: [{ a: 1 }], text: 'x' };
    expect(applyPlainUpdate(d, { $set: { 'list.0.a': 2 } })).toBeUndefined();
    expect(applyPlainUpdate(d, { $inc: { text: 1 } })).toBeUndefined();
    expect(applyPlainUpdate(d, { $push: { list: { $each: [1, 2] } } })).toBeUndefined();
    expect(applyPlainUpdate(d, { $set: { a: 1 }, $inc: { a: 1 } })).toBeUndefined();
    expect(applyPlainUpdate(d, { $set: { _id: 2 } })).toBeUndefined();
    expect(applyPlainUpdate(d, { $pull: { list: { a: 1 } } })).toBeUndefined();
  });

  it('shares untouched subtrees and copies the ones it changes', () => {
    const d: Document = { _id: 1, keep: { deep: [1, 2] }, change: { x: 1 } };
    const result = applyPlainUpdate(d, { $set: { 'change.x': 2 } });
    expect(result?.changed).toBe(true);
    expect(result?.next.keep).toBe(d.keep);
    expect(result?.next.change).toEqual({ x: 2 });
    expect(d.change).toEqual({ x: 1 });
  });
});
