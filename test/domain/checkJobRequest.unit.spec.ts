// checkJobRequest: the one check of a job request, made by the decider and, before an id is drawn, by requestJob.
import { describe, expect, it } from 'vitest';
import { checkJobRequest, jobDecider, type JobRequest } from '../../domain/job/jobDecider';
import { ValidationError } from '../../domain/shared/errors';

const t0 = new Date('2026-11-25T10:00:00.000Z');
const good: JobRequest = {
  projectId: 3,
  organizationId: null,
  category: 'Generate features',
  categoryKey: 'generate-features',
  key: '2',
  parameters: { dspId: 2 },
  jobNotificationUids: [1, 2, 1],
  createdByUserId: 1,
  now: t0,
};

/** The decider's answer to the same request under an id. */
const decided = (request: JobRequest) => () => jobDecider.decide({ type: 'RequestJob', data: { ...request, jobId: 7 } }, jobDecider.initialState());

describe('a job request without its id', () => {
  it('is the requested event as it will be logged, less the id', () => {
    const checked = checkJobRequest(good);
    expect(checked).toEqual({ projectId: 3, organizationId: null, category: 'Generate features', categoryKey: 'generate-features', key: '2', parameters: { dspId: 2 }, jobNotificationUids: [1, 2], createdByUserId: 1, created: t0.toISOString() });
    expect(decided(good)()).toEqual([{ type: 'JobRequested', data: { jobId: 7, ...checked } }]);
  });

  it.each([
    ['a project id of 0', { projectId: 0 }, /Project id/],
    ['an organization id that is not whole', { organizationId: 1.5 }, /Organization id/],
    ['a user id below 1', { createdByUserId: -1 }, /User id/],
    ['parameters that are a list', { parameters: [] as unknown as Record<string, unknown> }, /Job parameters must be an object/],
    ['parameters a read model cannot store', { parameters: { 'a.b': 1 } }, /parameters/],
    ['an empty category', { category: '' }, /category/],
    ['a category key with a hidden character', { categoryKey: 'a\u202eb' }, /categoryKey/],
    ['a key of 257 characters', { key: 'x'.repeat(257) }, /key/],
    ['a notification list naming user 0', { jobNotificationUids: [0] }, /jobNotificationUids/],
    ['an invalid time', { now: new Date(Number.NaN) }, /Time/],
  ] as const)('is refused with %s, as the decider refuses it', (_, change, message) => {
    const bad = { ...good, ...change } as JobRequest;
    expect(() => checkJobRequest(bad)).toThrow(ValidationError);
    expect(() => checkJobRequest(bad)).toThrow(message);
    const fromCheck = (() => { try { checkJobRequest(bad); } catch (error) { return (error as Error).message; } })();
    expect(decided(bad)).toThrow(fromCheck);
  });
});
