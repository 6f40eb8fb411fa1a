// A project's versions. A record is checked to be well-formed (hashes, position, accuracies, bounded
// text) so no value can break a projection; a retried version job records its version once; numbers
// count up and are never reused, a deleted version's included.
import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors';
import { checkId, checkIsoTimestamp, checkNumber } from '../shared/numberRules';
import { checkText, type TextRule } from '../shared/textRules';
import type { VersionContents, VersionCreated, VersionEvent, VersionRestoreStarted } from './versionEvents';

export type VersionCommand =
  | { type: 'RecordVersion'; data: Omit<VersionCreated['data'], 'number'> }
  | { type: 'UpdateVersion'; data: { projectId: number; versionId: number; description: string; updated: string } }
  | { type: 'DeleteVersion'; data: { projectId: number; versionId: number; deleted: string } }
  /**
   * A restore into this project begins. `endedJobIds`: the restores already started here whose jobs
   * have ended (the job worker knows; the decider does not read other streams). Another one still
   * running refuses this one, so two restores never interleave their writes.
   */
  | { type: 'BeginRestore'; data: VersionRestoreStarted['data'] & { endedJobIds: readonly number[] } };

export interface VersionState {
  /** Every version ever recorded, deleted ones included (a retried job must not record it again). */
  recorded: ReadonlySet<number>;
  /** The live versions' descriptions. */
  live: ReadonlyMap<number, string>;
  lastNumber: number;
  /** The jobs of every restore started into this project. */
  restoreJobIds: ReadonlySet<number>;
}

/** A restore's plan names every sample's id twice: bounded so the event stays well under a store's append limit (EventStoreDB: 1 MB). */
export const MAX_RESTORE_SAMPLES = 20_000;
const MAX_RESTORE_IDS = 10_000;

export const DESCRIPTION_RULE: TextRule = { max: 4096, multiline: true, allowEmpty: true };
const SHA256 = /^[0-9a-f]{64}$/;
/** Log positions are unsigned 64-bit integers, written in decimal. */
const POSITION = /^(0|[1-9][0-9]{0,19})$/;
const MAX_SAMPLES = Number.MAX_SAFE_INTEGER;

function checkHash(value: string, field: string): string {
  if (typeof value !== 'string' || !SHA256.test(value)) throw new ValidationError(`${field} must be a SHA-256 in hex`);
  return value;
}

function checkAccuracy(value: number | null, field: string): number | null {
  return value === null ? null : checkNumber(value, field, { min: 0, max: 1 });
}

function checkContents(c: VersionContents): VersionContents {
  return {
    samples: {
      count: checkNumber(c.samples.count, 'samples.count', { min: 0, max: MAX_SAMPLES, integer: true }),
      digest: checkHash(c.samples.digest, 'samples.digest'),
      blobs: c.samples.blobs.map((b, i) => checkHash(b, `samples.blobs[${i}]`)),
    },
    impulses: checkHash(c.impulses, 'impulses'),
    features: c.features.map((f, i) => checkHash(f, `features[${i}]`)),
    models: c.models.map((m, i) => {
      if (m.type !== 'keras' && m.type !== 'anomaly') throw new ValidationError(`models[${i}].type must be keras or anomaly`);
      return { learnId: checkId(m.learnId, `models[${i}].learnId`), type: m.type, model: checkHash(m.model, `models[${i}].model`), accuracy: checkAccuracy(m.accuracy, `models[${i}].accuracy`) };
    }),
    trainingAccuracy: checkAccuracy(c.trainingAccuracy, 'trainingAccuracy'),
    testAccuracy: checkAccuracy(c.testAccuracy, 'testAccuracy'),
  };
}

function checkPosition(value: string): string {
  if (typeof value !== 'string' || !POSITION.test(value) || BigInt(value) >= 2n ** 64n) throw new ValidationError('position must be a log position in decimal');
  return value;
}

function liveVersion(state: VersionState, versionId: number): string {
  const description = state.live.get(versionId);
  if (description === undefined) throw new NotFoundError(`Version ${versionId} does not exist in this project`, 'VERSION_NOT_FOUND');
  return description;
}

function recordVersion(data: Extract<VersionCommand, { type: 'RecordVersion' }>['data'], state: VersionState): VersionEvent[] {
  const checked: VersionCreated['data'] = {
    projectId: checkId(data.projectId, 'projectId'),
    versionId: checkId(data.versionId, 'versionId'),
    number: state.lastNumber + 1,
    description: checkText(data.description, 'description', DESCRIPTION_RULE),
    position: checkPosition(data.position),
    jobId: checkId(data.jobId, 'jobId'),
    contents: checkContents(data.contents),
    createdByUserId: data.createdByUserId === null ? null : checkId(data.createdByUserId, 'createdByUserId'),
    created: checkIsoTimestamp(data.created, 'created'),
  };
  if (state.recorded.has(checked.versionId)) return [];
  return [{ type: 'VersionCreated', data: checked }];
}

function checkPairs(pairs: [number, number][], field: string, max: number): [number, number][] {
  if (!Array.isArray(pairs) || pairs.length > max) throw new ValidationError(`${field}: at most ${max} pairs`);
  const targets = new Set<number>();
  const checked = pairs.map(([from, to], i): [number, number] => [checkId(from, `${field}[${i}][0]`), checkId(to, `${field}[${i}][1]`)]);
  for (const [, to] of checked) {
    if (targets.has(to)) throw new ValidationError(`${field}: target id ${to} is given twice`);
    targets.add(to);
  }
  return checked;
}

function beginRestore(data: Extract<VersionCommand, { type: 'BeginRestore' }>['data'], state: VersionState): VersionEvent[] {
  const { endedJobIds, ...plan } = data;
  const checked: VersionRestoreStarted['data'] = {
    projectId: checkId(plan.projectId, 'projectId'),
    jobId: checkId(plan.jobId, 'jobId'),
    sourceProjectId: checkId(plan.sourceProjectId, 'sourceProjectId'),
    versionId: checkId(plan.versionId, 'versionId'),
    position: checkPosition(plan.position),
    sampleIds: checkPairs(plan.sampleIds, 'sampleIds', MAX_RESTORE_SAMPLES),
    impulseIds: checkPairs(plan.impulseIds, 'impulseIds', MAX_RESTORE_IDS),
    blockIds: checkPairs(plan.blockIds, 'blockIds', MAX_RESTORE_IDS),
    started: checkIsoTimestamp(plan.started, 'started'),
  };
  if (checked.sourceProjectId === checked.projectId) throw new ValidationError('A version is restored into another project, not into its own', 'RESTORE_INTO_SOURCE');
  // A retried job: its plan is the one recorded.
  if (state.restoreJobIds.has(checked.jobId)) return [];
  const running = [...state.restoreJobIds].filter((id) => !endedJobIds.includes(id));
  if (running.length > 0) throw new ConflictError(`Restore job ${running[0]} is still writing into this project: wait until it ends`, 'RESTORE_RUNNING');
  return [{ type: 'VersionRestoreStarted', data: checked }];
}

export const versionDecider: Decider<VersionCommand, VersionEvent, VersionState> = {
  initialState: () => ({ recorded: new Set(), live: new Map(), lastNumber: 0, restoreJobIds: new Set() }),
  decide(command, state) {
    switch (command.type) {
      case 'RecordVersion':
        return recordVersion(command.data, state);
      case 'UpdateVersion': {
        const description = checkText(command.data.description, 'description', DESCRIPTION_RULE);
        if (liveVersion(state, command.data.versionId) === description) return [];
        return [{ type: 'VersionUpdated', data: { ...command.data, description, updated: checkIsoTimestamp(command.data.updated, 'updated') } }];
      }
      case 'DeleteVersion':
        liveVersion(state, command.data.versionId);
        return [{ type: 'VersionDeleted', data: { ...command.data, deleted: checkIsoTimestamp(command.data.deleted, 'deleted') } }];
      case 'BeginRestore':
        return beginRestore(command.data, state);
    }
  },
  evolve(state, event) {
    const live = new Map(state.live);
    switch (event.type) {
      case 'VersionCreated':
        live.set(event.data.versionId, event.data.description);
        return { ...state, recorded: new Set([...state.recorded, event.data.versionId]), live, lastNumber: Math.max(state.lastNumber, event.data.number) };
      case 'VersionUpdated':
        live.set(event.data.versionId, event.data.description);
        return { ...state, live };
      case 'VersionDeleted':
        live.delete(event.data.versionId);
        return { ...state, live };
      case 'VersionRestoreStarted':
        return { ...state, restoreJobIds: new Set([...state.restoreJobIds, event.data.jobId]) };
    }
  },
};
