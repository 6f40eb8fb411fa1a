// The document an upsert inserts (buildUpsertDoc): the projections' inserts (`_id` and top-level
// fields) are built field by field, without an update planned for them. They must give what the
// general path gives (which a filter with an `$and` takes, as it seeds nothing) and, for defined
// values, what mingo's update of an empty document gives; and share nothing with the update.
import fc from 'fast-check';
import { update as mingoUpdate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { copyDoc } from '../../stores/readstore/documents/plainObjects';
import { buildUpsertDoc } from '../../stores/readstore/documents/updates';
import type { Document, Filter, Update } from '../../stores/readstore/readStore';

const key = fc.constantFrom('a', 'b', 'c', 'n');
const fieldsOf = (scalar: fc.Arbitrary<unknown>) => {
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(key, tie('v'), { maxKeys: 3, noNullPrototype: true })),
  })).v;
  const fields = fc.dictionary(key, value, { maxKeys: 3, noNullPrototype: true });
  return fc.record({ $setOnInsert: fields, $set: fields }, { requiredKeys: [] }) as fc.Arbitrary<Update>;
};
const defined = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('x', true, null), fc.date({ noInvalidDate: true }));
const withUndefined = fc.oneof(defined, fc.constant(undefined));

/** mingo's insert: the update's `$setOnInsert`, then its `$set`, applied to an empty document. */
function byMingo(id: number, u: Update): Document {
  const doc: Record<string, unknown> = {};
  for (const part of [u.$setOnInsert, u.$set]) {
    if (part && Object.keys(part).length > 0) mingoUpdate(doc, { $set: copyDoc(part) } as Parameters<typeof mingoUpdate>[1], undefined, undefined, { cloneMode: 'deep' });
  }
  return copyDoc({ _id: id, ...doc });
}

const generalPath = (id: number, u: Update): Document => buildUpsertDoc({ _id: id, $and: [{}] } as Filter, u);

describe('buildUpsertDoc', () => {
  it('builds an insert of top-level fields as its general path does, sharing nothing with the update', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fieldsOf(withUndefined), (id, u) => {
        const built = buildUpsertDoc({ _id: id }, u);
        expect(built).toStrictEqual(generalPath(id, u));
        for (const part of [u.$setOnInsert, u.$set]) {
          for (const [k, v] of Object.entries(part ?? {})) if (v !== null && typeof v === 'object') expect(built[k]).not.toBe(v);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('builds an insert of defined top-level fields as mingo does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fieldsOf(defined), (id, u) => {
        expect(buildUpsertDoc({ _id: id }, u)).toStrictEqual(byMingo(id, u));
      }),
      { numRuns: 2000 },
    );
  });
});
