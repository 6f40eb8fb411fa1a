import type { ReadStore } from '../../stores/readstore/readStore';
import { ANOMALY_MODELS, anomalyModelId, type AnomalyModelDocument } from './anomalyModelDocument';

export class AnomalyModelQueries {
  constructor(private readonly store: ReadStore) {}

  /** The block's settings and latest model; null when nothing was ever set or trained. */
  byLearnBlock(projectId: number, learnId: number): Promise<AnomalyModelDocument | null> {
    return this.store.collection<AnomalyModelDocument>(ANOMALY_MODELS).findOne({ _id: anomalyModelId(projectId, learnId) });
  }
}
