// The MongoDB adapter's plans around what FerretDB gets wrong: which clauses the server is not given,
// which array operators are computed here, and which inserted fields are set again after an upsert.
import { describe, expect, it } from 'vitest';
import { droppedOnInsert, planFilter, splitUpdate } from '../../stores/readstore/mongo/ferretDbGaps';

describe('planFilter', () => {
  it('sends the whole filter to the server when it evaluates every clause right', () => {
    const plan = planFilter({ a: 1, items: { $elemMatch: { $gt: 2 } } });
    expect(plan).toEqual({ server: { a: 1, items: { $elemMatch: { $gt: 2 } } } });
  });

  it('keeps `$elemMatch` with field conditions (or `$ne` inside) off the server, and tests the whole filter here', () => {
    const plan = planFilter({ a: 1, items: { $elemMatch: { k: 2 } }, $or: [{ b: { $elemMatch: { $ne: 1 } } }] });
    expect(plan.server).toEqual({ a: 1 });
    expect(plan.residual?.test({ _id: 1, a: 1, items: [{ k: 2 }], b: [2] })).toBe(true);
    expect(plan.residual?.test({ _id: 1, a: 1, items: [{ k: 3 }], b: [2] })).toBe(false);
  });
});

describe('splitUpdate', () => {
  it('computes here a `$pull` by condition and a `$push` with modifiers, and leaves plain ones to the server', () => {
    const split = splitUpdate({ $set: { x: 1 }, $pull: { a: { $gt: 1 }, b: 3 }, $push: { c: { $each: [1], $slice: -2 }, d: 4 } });
    expect(split.server).toEqual({ $set: { x: 1 }, $pull: { b: 3 }, $push: { d: 4 } });
    expect(split.client).toEqual({ $pull: { a: { $gt: 1 } }, $push: { c: { $each: [1], $slice: -2 } } });
  });

  it('gives the update as it is when the server takes all of it', () => {
    const update = { $push: { c: { $each: [1, 2] } }, $pull: { b: 3 } };
    expect(splitUpdate(update)).toEqual({ server: update });
  });
});

describe('droppedOnInsert', () => {
  it('names the `$setOnInsert` fields FerretDB leaves out: nulls and empty arrays', () => {
    expect(droppedOnInsert({ $setOnInsert: { a: null, b: [], c: 0, d: [1] } })).toEqual({ a: null, b: [] });
    expect(droppedOnInsert({ $setOnInsert: { c: 0 } })).toBeUndefined();
    expect(droppedOnInsert({ $set: { a: null } })).toBeUndefined();
  });
});
