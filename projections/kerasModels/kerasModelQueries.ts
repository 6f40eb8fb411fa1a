import type { ReadStore } from '../../stores/readstore/readStore';
import { KERAS_MODELS, kerasModelId, type KerasModelDocument } from './kerasModelDocument';

export class KerasModelQueries {
  constructor(private readonly store: ReadStore) {}

  /** The block's settings and latest model; null when neither was ever recorded. */
  byLearnBlock(projectId: number, learnId: number): Promise<KerasModelDocument | null> {
    return this.store.collection<KerasModelDocument>(KERAS_MODELS).findOne({ _id: kerasModelId(projectId, learnId) });
  }
}
