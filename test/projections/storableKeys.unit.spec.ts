import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readableKeys, storableKeys } from '../../projections/projection';

const oddKey = fc.oneof(fc.string(), fc.constantFrom('', '.', '..', '$', '$where', 'a.b', '%', '%2E', '%%', '\u0000', '__proto__', 'constructor', 'a$b'));
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), tie('object')),
  object: fc.dictionary(oddKey, tie('value'), { maxKeys: 4 }),
})).object;

describe('client-chosen keys in the read store', () => {
  it('are given back exactly as they were sent', () => {
    fc.assert(fc.property(json, (value) => {
        expect(readableKeys(storableKeys(value))).toEqual(value);
      }), { numRuns: 500 });
  });

  it('are stored with no ".", no leading "$", no NUL and never empty, at every depth', () => {
    const keys = (value: unknown): string[] =>
      Array.isArray(value) ? value.flatMap(keys) : value !== null && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => [k, ...keys(v)]) : [];
    fc.assert(
      fc.property(json, (value) => {
        for (const key of keys(storableKeys(value))) expect(key).toMatch(/^(?!\$)[^.\u0000]+$/);
      }),
      { numRuns: 500 },
    );
  });

  it('are left as they are when nothing in them needs escaping', () => {
    expect(storableKeys({ sensor: 'imu', 'sample rate': '100', nested: { ok: 1 } })).toEqual({ sensor: 'imu', 'sample rate': '100', nested: { ok: 1 } });
  });
});
