import type { ReadStore } from '../../stores/readstore/readStore';
import { OPTIMIZE_CONFIGS, type OptimizeConfigDocument } from './optimizeConfigDocument';

export class OptimizeConfigQueries {
  constructor(private readonly store: ReadStore) {}

  /** The project's tuner config; null when it was never set. */
  forProject(projectId: number): Promise<OptimizeConfigDocument | null> {
    return this.store.collection<OptimizeConfigDocument>(OPTIMIZE_CONFIGS).findOne({ _id: projectId });
  }
}
