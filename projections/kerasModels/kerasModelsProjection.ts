import type { KerasEvent } from '../../domain/learn/kerasEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { KERAS_MODELS, kerasModelId, storedKerasModel, type KerasModelDocument } from './kerasModelDocument';

/** Each keras block's settings and latest model; guarded by position, so a replay changes nothing. */
export const kerasModelsProjection = defineProjection<KerasEvent>('kerasModels', [KERAS_MODELS], {
  async KerasSettingsSet(event, store) {
    const { projectId, learnId, settings } = event.data;
    const collection = store.collection<KerasModelDocument>(KERAS_MODELS);
    const _id = kerasModelId(projectId, learnId);
    // The first event creates the document with its fields; a later one updates them.
    await insertOnce(collection, { _id, projectId, learnId, settings, model: null, _position: '' }, event);
    await updateOnce(collection, _id, { $set: { settings } }, event);
  },
  async KerasModelTrained(event, store) {
    const { projectId, learnId } = event.data;
    const model = storedKerasModel(event.data);
    const collection = store.collection<KerasModelDocument>(KERAS_MODELS);
    const _id = kerasModelId(projectId, learnId);
    await insertOnce(collection, { _id, projectId, learnId, settings: null, model, _position: '' }, event);
    await updateOnce(collection, _id, { $set: { model } }, event);
  },
});
