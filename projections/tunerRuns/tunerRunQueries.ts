import type { ReadStore } from '../../stores/readstore/readStore';
import { TUNER_RUNS, TUNER_TRIALS, tunerRunId, type TunerRunDocument, type TunerTrialDocument } from './tunerRunDocument';

export class TunerRunQueries {
  constructor(private readonly store: ReadStore) {}

  /** The project's runs, oldest first. */
  forProject(projectId: number): Promise<TunerRunDocument[]> {
    return this.store.collection<TunerRunDocument>(TUNER_RUNS).find({ projectId }, { sort: { index: 1 } });
  }

  byCoordinator(projectId: number, coordinatorJobId: number): Promise<TunerRunDocument | null> {
    return this.store.collection<TunerRunDocument>(TUNER_RUNS).findOne({ _id: tunerRunId(projectId, coordinatorJobId) });
  }

  /** A run's trials in their order. */
  trials(projectId: number, coordinatorJobId: number): Promise<TunerTrialDocument[]> {
    return this.store.collection<TunerTrialDocument>(TUNER_TRIALS).find({ projectId, coordinatorJobId }, { sort: { trial: 1 } });
  }
}
