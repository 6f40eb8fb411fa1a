import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../domain/shared/errors';
import { FREE_JSON_RULE, jsonProblem } from '../../domain/shared/jsonRules';
import { checkDate, checkIsoTimestamp, checkNumber, numberProblem } from '../../domain/shared/numberRules';
import { REFUSED_CHARACTER, REFUSED_SINGLE_LINE, checkText, cleanText, textProblem } from '../../domain/shared/textRules';

// UTF-16 code units, weighted towards the ones the rules are about, lone surrogates included.
const unit = fc.oneof(
  fc.constantFrom('\t', '\n', '\r', '\u0000', '\u001b', '\u007f', '\u0085', '\u009f', '\u202a', '\u202e', '\u2066', '\u2069', '\u2028', '\u2029', '\ud800', '\udfff', 'a', 'é', ' '),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
);
const anyText = fc.string({ unit, maxLength: 40 });
const hasLoneSurrogate = (s: string) => /\p{Cs}/u.test(s);

describe('the text rules', () => {
  it('accept a multi-line text exactly when it holds no refused character and no lone surrogate (what generators may rely on)', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const accepted = textProblem(s, 'f', { max: 1000, multiline: true, allowEmpty: true }) === undefined;
        expect(accepted).toBe(!REFUSED_CHARACTER.test(s) && !hasLoneSurrogate(s));
      }),
      { numRuns: 2000 },
    );
  });

  it('accept a single-line text exactly when, on top of that, it holds no tab or line break', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const accepted = textProblem(s, 'f', { max: 1000, allowEmpty: true }) === undefined;
        expect(accepted).toBe(!REFUSED_CHARACTER.test(s) && !REFUSED_SINGLE_LINE.test(s) && !hasLoneSurrogate(s));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuse blank text unless allowed, and text over the limit, naming the field', () => {
    expect(() => checkText('   ', '"name"', { max: 10 })).toThrow(new ValidationError('"name" is empty'));
    expect(checkText('', '"note"', { max: 10, allowEmpty: true })).toBe('');
    expect(() => checkText('x'.repeat(11), '"name"', { max: 10 })).toThrow(/"name" is 11 characters long; at most 10 are allowed/);
  });

  it('clean any text into one the same rule accepts, within its length', () => {
    fc.assert(
      fc.property(anyText, fc.boolean(), fc.integer({ min: 1, max: 30 }), (s, multiline, max) => {
        const rule = { max, multiline, allowEmpty: true };
        const cleaned = cleanText(s, rule);
        expect(textProblem(cleaned, 'f', rule)).toBeUndefined();
        expect(cleaned.length).toBeLessThanOrEqual(max);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the number rules', () => {
  it('refuse NaN and the infinities whatever the range, and store -0 as 0', () => {
    const rule = { min: -Number.MAX_VALUE, max: Number.MAX_VALUE };
    for (const value of [Number.NaN, Infinity, -Infinity]) expect(numberProblem(value, 'n', rule)).toMatch(/^n must be a (finite )?number/);
    expect(Object.is(checkNumber(-0, 'n', rule), 0)).toBe(true);
  });

  it('accept exactly the finite numbers in range, and only whole ones when asked', () => {
    fc.assert(
      fc.property(fc.double(), fc.boolean(), (value, integer) => {
        const rule = { min: -1e6, max: 1e6, integer };
        const accepted = numberProblem(value, 'n', rule) === undefined;
        expect(accepted).toBe(Number.isFinite(value) && value >= -1e6 && value <= 1e6 && (!integer || Number.isSafeInteger(value)));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuse dates that are invalid or outside 1970 to 9999, and timestamps in any other spelling', () => {
    expect(() => checkDate(new Date(Number.NaN), 'now')).toThrow(/now is not a valid date/);
    expect(() => checkDate(new Date(-1), 'now')).toThrow(/between 1970 and 9999/);
    expect(checkIsoTimestamp('2026-11-25T10:00:00.000Z', 't')).toBe('2026-11-25T10:00:00.000Z');
    for (const bad of ['2026-11-25', '2026-11-25T10:00:00Z', '2026-11-25T10:00:00.000+00:00', 'Wed, 25 Nov 2026 10:00:00 GMT', '']) {
      expect(() => checkIsoTimestamp(bad, 't')).toThrow(/t must be an ISO 8601 timestamp/);
    }
  });
});

describe('the free-form JSON rule', () => {
  it('accepts what a read model can store: finite numbers, texts, lists and objects with plain keys', () => {
    expect(jsonProblem({ a: [1, -2.5, 'x\ny', true, null, { b: {} }], 'c d': 'é' }, 'v', FREE_JSON_RULE)).toBeUndefined();
  });

  it('refuses keys with a leading $ or a dot, non-finite numbers, hidden characters, deep nesting and size', () => {
    expect(jsonProblem({ a: { $gt: 1 } }, 'v', FREE_JSON_RULE)).toMatch(/^v\.a: the key "\$gt" must not start with "\$"/);
    expect(jsonProblem([{ 'x.y': 1 }], 'v', FREE_JSON_RULE)).toMatch(/^v\[0\]: the key "x\.y"/);
    expect(jsonProblem({ n: Number.NaN }, 'v', FREE_JSON_RULE)).toMatch(/^v\.n must be a finite number, got NaN/);
    expect(jsonProblem({ s: 'a\u202Eb' }, 'v', FREE_JSON_RULE)).toMatch(/^v\.s contains an invisible formatting character/);
    expect(jsonProblem({ ['k\u0000']: 1 }, 'v', FREE_JSON_RULE)).toMatch(/^v: a key contains a control character/);
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = [deep];
    expect(jsonProblem(deep, 'v', FREE_JSON_RULE)).toMatch(/nested more than 16 levels deep/);
    expect(jsonProblem(Array.from({ length: 30_000 }, () => 'abc'), 'v', FREE_JSON_RULE)).toMatch(/^v is \d+ characters long as JSON; at most 100000/);
  });
});
