import type { OptimizeConfigEvent } from '../../domain/optimize/optimizeEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { OPTIMIZE_CONFIGS, type OptimizeConfigDocument } from './optimizeConfigDocument';

/** Each project's tuner config, the latest set; guarded by position, so a replay changes nothing. */
export const optimizeConfigsProjection = defineProjection<OptimizeConfigEvent>('optimizeConfigs', [OPTIMIZE_CONFIGS], {
  async OptimizeConfigSet(event, store) {
    const { projectId, config, set } = event.data;
    const collection = store.collection<OptimizeConfigDocument>(OPTIMIZE_CONFIGS);
    // The first event creates the document with its fields; a later one replaces them.
    await insertOnce(collection, { _id: projectId, projectId, config, set, _position: '' }, event);
    await updateOnce(collection, projectId, { $set: { config, set } }, event);
  },
});
