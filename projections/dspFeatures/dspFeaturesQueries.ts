import type { ReadStore } from '../../stores/readstore/readStore';
import { DSP_FEATURES, dspFeaturesId, type DspFeaturesDocument } from './dspFeaturesDocument';

export class DspFeaturesQueries {
  constructor(private readonly store: ReadStore) {}

  /** The block's current features: null when never generated, or cleared since. */
  async current(projectId: number, dspId: number): Promise<DspFeaturesDocument | null> {
    const doc = await this.store.collection<DspFeaturesDocument>(DSP_FEATURES).findOne({ _id: dspFeaturesId(projectId, dspId) });
    return doc && doc.current ? doc : null;
  }
}
