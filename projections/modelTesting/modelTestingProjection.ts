import type { ModelTestingEvent } from '../../domain/learn/modelTestingEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { MODEL_TESTING, modelTestingId, type ModelTestingDocument } from './modelTestingDocument';

/** Each impulse's latest model testing run; guarded by position, so a replay changes nothing. */
export const modelTestingProjection = defineProjection<ModelTestingEvent>('modelTesting', [MODEL_TESTING], {
  async ModelTested(event, store) {
    const { projectId, impulseId, jobId, results, summary, tested } = event.data;
    const collection = store.collection<ModelTestingDocument>(MODEL_TESTING);
    const _id = modelTestingId(projectId, impulseId);
    const fields = { projectId, impulseId, jobId, results, summary: { ...summary }, tested };
    await insertOnce(collection, { _id, ...fields, _position: '' }, event);
    await updateOnce(collection, _id, { $set: fields }, event);
  },
});
