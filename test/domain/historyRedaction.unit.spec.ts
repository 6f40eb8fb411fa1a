import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FORGOTTEN, historyData, REDACTED, SECRET_FIELDS } from '../../domain/audit/historyRedaction';
import { sealedFieldsByEventType } from '../../domain/personalData';
import { eventGenerators, type Ids } from '../projections/eventArbitraries';

// Field names (or Type.field) that look like a secret but are not one, and why.
const NOT_SECRET: Readonly<Record<string, string>> = {
  apiKeyId: 'an id',
  hmacKeyId: 'an id',
  signatureKeyId: 'an id',
  keyHint: 'the last characters of a key, shown by the API to tell keys apart',
  isDevelopmentKey: 'a flag',
  categoryKey: 'a job kind',
  'JobRequested.key': 'what a job is about (a DSP block id)',
  logHash: 'the running hash of the log, public by design',
  totpTimeStep: 'a time step, not a code',
  via: 'how a password or activation happened',
  allowPasswordAuth: "a white label's switch",
};
const LOOKS_SECRET = /key|hash|secret|password|token|code|body/i;

const ids: Ids = { userId: 1, projectId: 2, organizationId: 3, id: 4, otherUserId: 5, deviceId: 'd' };

describe('what the history shows of an event', () => {
  it('lists every field that looks like a secret, of every event type, as secret or as not secret with a reason', () => {
    for (const [type, generator] of Object.entries(eventGenerators)) {
      for (const data of fc.sample(generator(ids) as fc.Arbitrary<Record<string, unknown>>, 20)) {
        for (const field of Object.keys(data)) {
          if (!LOOKS_SECRET.test(field)) continue;
          const listed = (SECRET_FIELDS[type] ?? []).includes(field) || field in NOT_SECRET || `${type}.${field}` in NOT_SECRET;
          expect(listed, `${type}.${field} looks like a secret: list it in SECRET_FIELDS or NOT_SECRET`).toBe(true);
        }
      }
    }
  });

  it('redacts every listed secret that holds a value, and leaves the rest', () => {
    for (const [type, fields] of Object.entries(SECRET_FIELDS)) {
      const generator = eventGenerators[type as keyof typeof eventGenerators] as unknown as (ids: Ids) => fc.Arbitrary<Record<string, unknown>>;
      for (const data of fc.sample(generator(ids), 20)) {
        const shown = historyData(type, data, false);
        for (const [field, value] of Object.entries(data)) {
          if (fields.includes(field) && value !== null && value !== undefined) expect(shown[field]).toBe(REDACTED);
          else expect(shown[field]).toEqual(value);
        }
      }
    }
  });

  it("marks a forgotten subject's sealed fields as forgotten, and keeps secrets redacted", () => {
    const shown = historyData('UserRegistered', { userId: 1, username: 'u', name: null, email: null, jobTitle: null, companyName: null, passwordHash: 'scrypt$x' }, true);
    expect(shown).toMatchObject({ username: 'u', name: FORGOTTEN, email: FORGOTTEN, jobTitle: FORGOTTEN, companyName: FORGOTTEN, passwordHash: REDACTED });
    expect(sealedFieldsByEventType.UserRegistered!.fields).toEqual(expect.arrayContaining(['name', 'email']));
  });

  it("shows an e-mail's address to its recipient and staff only, never to a project's readers", () => {
    const email = { emailId: 3, userId: 7, projectId: 2, from: 'noreply@x', to: 'ada@example.com', subject: 'Job 1 finished', bodyText: 'b', bodyHTML: 'b', queued: '2026-01-01T00:00:00.000Z' };
    expect(historyData('EmailQueued', email, false, { kind: 'project' }).to).toBe(REDACTED);
    expect(historyData('EmailQueued', email, false, { kind: 'user', userId: 8 }).to).toBe(REDACTED);
    expect(historyData('EmailQueued', email, false, { kind: 'user', userId: 7 }).to).toBe('ada@example.com');
    expect(historyData('EmailQueued', email, false, { kind: 'all' }).to).toBe('ada@example.com');
    // A forgotten recipient stays marked as forgotten.
    expect(historyData('EmailQueued', { ...email, to: null }, true, { kind: 'project' }).to).toBe(FORGOTTEN);
  });
});
