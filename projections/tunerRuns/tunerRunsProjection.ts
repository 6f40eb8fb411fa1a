import type { TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { storedTrialImpulse, TUNER_RUNS, TUNER_TRIALS, tunerRunId, tunerTrialId, type TunerRunDocument, type TunerTrialDocument } from './tunerRunDocument';

type TrialRef = { projectId: number; coordinatorJobId: number; trial: number };

const blankTrial = (d: TrialRef): TunerTrialDocument => ({
  _id: tunerTrialId(d.projectId, d.coordinatorJobId, d.trial), projectId: d.projectId, coordinatorJobId: d.coordinatorJobId, trial: d.trial, impulse: null, round: null, status: 'pending', jobId: null, attempt: 0,
  accuracy: null, loss: null, estimates: null, overBudget: false, error: null, epochs: [], modelSha256: null, _position: '',
});

/** A trial's document, created by whichever of its events comes first, then updated once per event. */
async function updateTrial(event: StoredEvent, store: ReadStore, d: TrialRef, fields: Partial<TunerTrialDocument>): Promise<void> {
  const collection = store.collection<TunerTrialDocument>(TUNER_TRIALS);
  const blank = blankTrial(d);
  await insertOnce(collection, { ...blank, ...fields }, event);
  await updateOnce(collection, blank._id, { $set: fields }, event);
}

/** Each tuner run and its trials; guarded by position, so a replay changes nothing. */
export const tunerRunsProjection = defineProjection<TunerRunEvent>('tunerRuns', [TUNER_RUNS, TUNER_TRIALS], {
  async TunerRunStarted(event, store) {
    const d = event.data;
    const collection = store.collection<TunerRunDocument>(TUNER_RUNS);
    const _id = tunerRunId(d.projectId, d.coordinatorJobId);
    const fields = { index: d.index, name: d.name, config: d.config, space: d.space, seed: d.seed, extendedFromJobId: d.extendedFromJobId, created: d.started };
    await insertOnce(collection, { _id, projectId: d.projectId, coordinatorJobId: d.coordinatorJobId, ...fields, jobStatus: 'running', error: null, _position: '' }, event);
  },
  async TunerTrialPlanned(event, store) {
    const d = event.data;
    await updateTrial(event, store, d, { impulse: storedTrialImpulse(d.impulse), round: d.round });
  },
  async TunerTrialStarted(event, store) {
    const d = event.data;
    await updateTrial(event, store, d, { status: 'running', jobId: d.jobId, attempt: d.attempt, epochs: [] });
  },
  async TunerTrialEpoch(event, store) {
    const d = event.data;
    const epoch = { epoch: d.epoch, loss: d.loss, accuracy: d.accuracy, valLoss: d.valLoss, valAccuracy: d.valAccuracy };
    const collection = store.collection<TunerTrialDocument>(TUNER_TRIALS);
    const blank = blankTrial(d);
    await insertOnce(collection, { ...blank, epochs: [epoch] }, event);
    await updateOnce(collection, blank._id, { $push: { epochs: epoch } }, event);
  },
  async TunerTrialFinished(event, store) {
    const d = event.data;
    await updateTrial(event, store, d, { status: d.status, accuracy: d.accuracy, loss: d.loss, estimates: d.estimates, overBudget: d.overBudget, error: d.error, modelSha256: d.modelSha256 ?? null });
  },
  async TunerTrialImpulseAdded(event, store) {
    const d = event.data;
    await updateTrial(event, store, d, { impulseAddedToProject: { impulseId: d.impulseId, jobId: d.jobId } });
  },
  async TunerRunRenamed(event, store) {
    const d = event.data;
    await updateOnce(store.collection<TunerRunDocument>(TUNER_RUNS), tunerRunId(d.projectId, d.coordinatorJobId), { $set: { name: d.name } }, event);
  },
  async TunerRunEnded(event, store) {
    const d = event.data;
    await updateOnce(store.collection<TunerRunDocument>(TUNER_RUNS), tunerRunId(d.projectId, d.coordinatorJobId), { $set: { jobStatus: d.status, error: d.error } }, event);
  },
});
