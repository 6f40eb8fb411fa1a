import type { ReadStore } from '../../stores/readstore/readStore';
import { MODEL_TESTING, modelTestingId, type ModelTestingDocument } from './modelTestingDocument';

export class ModelTestingQueries {
  constructor(private readonly store: ReadStore) {}

  /** The impulse's latest model testing run; null before the first. */
  latest(projectId: number, impulseId: number): Promise<ModelTestingDocument | null> {
    return this.store.collection<ModelTestingDocument>(MODEL_TESTING).findOne({ _id: modelTestingId(projectId, impulseId) });
  }
}
