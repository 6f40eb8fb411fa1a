import type { AnomalyEvent } from '../../domain/learn/anomalyEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { ANOMALY_MODELS, anomalyModelId, type AnomalyModelDocument } from './anomalyModelDocument';

const EMPTY = { axes: null, clusterCount: null, minimumConfidenceRating: null, model: null };

/**
 * Each anomaly block's settings (only the fields an event gives change) and latest model. The first
 * event creates the document with its own fields; later ones apply once, guarded by position.
 */
export const anomalyModelsProjection = defineProjection<AnomalyEvent>('anomalyModels', [ANOMALY_MODELS], {
  async AnomalySettingsChanged(event, store) {
    const { projectId, learnId, axes, clusterCount, minimumConfidenceRating } = event.data;
    const fields: Partial<AnomalyModelDocument> = {};
    if (axes !== undefined) fields.axes = axes;
    if (clusterCount !== undefined) fields.clusterCount = clusterCount;
    if (minimumConfidenceRating !== undefined) fields.minimumConfidenceRating = minimumConfidenceRating;
    const collection = store.collection<AnomalyModelDocument>(ANOMALY_MODELS);
    const _id = anomalyModelId(projectId, learnId);
    await insertOnce(collection, { _id, projectId, learnId, ...EMPTY, ...fields, _position: '' }, event);
    await updateOnce(collection, _id, { $set: fields }, event);
  },
  async AnomalyModelTrained(event, store) {
    const { projectId, learnId } = event.data;
    const collection = store.collection<AnomalyModelDocument>(ANOMALY_MODELS);
    const _id = anomalyModelId(projectId, learnId);
    await insertOnce(collection, { _id, projectId, learnId, ...EMPTY, model: { ...event.data }, _position: '' }, event);
    await updateOnce(collection, _id, { $set: { model: { ...event.data } } }, event);
  },
});
