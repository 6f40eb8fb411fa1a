import type { ReadStore } from '../../stores/readstore/readStore';
import { TUNER_RUNS, TUNER_TRIALS, tunerRunId, tunerTrialId, type TunerRunDocument, type TunerTrialDocument } from './tunerRunDocument';

export class TunerRunQueries {
  constructor(private readonly store: ReadStore) {}

  /** The project's runs, oldest first. */
  forProject(projectId: number): Promise<TunerRunDocument[]> {
    return this.store.collection<TunerRunDocument>(TUNER_RUNS).find({ projectId }, { sort: { index: 1 } });
  }

  byCoordinator(projectId: number, coordinatorJobId: number): Promise<TunerRunDocument | null> {
    return this.store.collection<TunerRunDocument>(TUNER_RUNS).findOne({ _id: tunerRunId(projectId, coordinatorJobId) });
  }

  /** The project's latest run (the highest index); null before its first. */
  async latest(projectId: number): Promise<TunerRunDocument | null> {
    return (await this.store.collection<TunerRunDocument>(TUNER_RUNS).find({ projectId }, { sort: { index: -1 }, limit: 1 }))[0] ?? null;
  }

  trial(projectId: number, coordinatorJobId: number, trial: number): Promise<TunerTrialDocument | null> {
    return this.store.collection<TunerTrialDocument>(TUNER_TRIALS).findOne({ _id: tunerTrialId(projectId, coordinatorJobId, trial) });
  }

  /** A run's trials in their order. */
  trials(projectId: number, coordinatorJobId: number): Promise<TunerTrialDocument[]> {
    return this.store.collection<TunerTrialDocument>(TUNER_TRIALS).find({ projectId, coordinatorJobId }, { sort: { trial: 1 } });
  }
}
