// The check by running a DSP config (domain/impulse/dspConfig.ts dspRunRefusals) runs the block on a
// window of up to 100,000 rows: seconds of CPU for some configs. Saving a config and requesting
// generate-features make it in the DSP pool, queued behind the pool's other tasks, so the event loop
// serving requests never runs it.
import type { DspRunCheck } from '../../domain/impulse/dspConfig';
import type { ThreadPool } from '../jobs/threadPool';
import { DSP_POOL_TASKS } from './generateFeatures';

/** The refusals of a check by running (an empty list: none), made off the caller's thread. */
export type DspRunChecker = (check: DspRunCheck) => Promise<string[]>;

export const dspRunCheckerOn = (pool: ThreadPool): DspRunChecker => (check) => pool.run<string[]>({ module: DSP_POOL_TASKS, name: 'dspRunCheck', input: check });
