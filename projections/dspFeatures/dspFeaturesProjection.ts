import type { DspFeaturesEvent } from '../../domain/dsp/dspFeaturesEvents';
import type { DspBlockCleared } from '../../domain/impulse/impulseEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { DSP_FEATURES, dspFeaturesId, type DspFeaturesDocument } from './dspFeaturesDocument';

/**
 * The latest features of each DSP block: a later DspFeaturesGenerated replaces the document (guarded
 * by position, so a replay changes nothing), a DspBlockCleared marks it no longer current.
 */
export const dspFeaturesProjection = defineProjection<DspFeaturesEvent | DspBlockCleared>('dspFeatures', [DSP_FEATURES], {
  async DspFeaturesGenerated(event, store) {
    const { dspConfig, ...rest } = event.data;
    const fields = { ...rest, dspConfig: Object.entries(dspConfig).map(([param, value]) => ({ param, value })), current: true };
    const collection = store.collection<DspFeaturesDocument>(DSP_FEATURES);
    const _id = dspFeaturesId(event.data.projectId, event.data.dspId);
    await insertOnce(collection, { _id, ...fields, _position: '' }, event);
    await updateOnce(collection, _id, { $set: fields }, event);
  },
  async DspBlockCleared(event, store) {
    await updateOnce(store.collection<DspFeaturesDocument>(DSP_FEATURES), dspFeaturesId(event.data.projectId, event.data.dspId), { $set: { current: false } }, event);
  },
});
