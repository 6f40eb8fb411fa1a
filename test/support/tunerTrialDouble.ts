// TEST DOUBLE of the `tuner-trial` job runner: no features, no training. It reads
// its trial's impulse from the run stream, waits (its signal stops it), and records metrics derived
// from the impulse, so a run's result is deterministic. The real trial runner is another helper's;
// this one lets the coordinator be tested whole. Never registered in production: test files give it
// to their service, and the test entry point (testServiceMain.ts) adds it only when
// TEST_TUNER_TRIAL_DOUBLE names its delay in ms.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleCommand } from '../../commands/handleCommand';
import type { JobRunner } from '../../commands/jobs/jobRunners';
import type { TunerTrialParameters } from '../../commands/optimize/tunerCoordinator';
import { trialKey } from '../../domain/optimize/searchSpace';
import { tunerRunDecider } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream, type TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';

/** What the double does (set by a test) and what it saw. */
export interface TrialDoubleBehaviour {
  delayMs: number;
  /** Trials that throw instead of recording a result. */
  failTrials: Set<number>;
  /** Trials that wait a minute. */
  slowTrials: Set<number>;
  running: number;
  maxRunning: number;
  runs: number;
}

export const trialDoubleBehaviour = (delayMs: number): TrialDoubleBehaviour => ({ delayMs, failTrials: new Set(), slowTrials: new Set(), running: 0, maxRunning: 0, runs: 0 });

/** A deterministic accuracy from the impulse: equal impulses score alike, different ones mostly differ. */
export const doubleAccuracy = (key: string): number => 0.5 + createHash('sha256').update(key).digest()[0]! / 512;

export function tunerTrialDouble(events: EventStore, behaviour: TrialDoubleBehaviour): JobRunner {
  return async ({ projectId, parameters, signal, log }) => {
    const { coordinatorJobId, trial } = parameters as unknown as TunerTrialParameters;
    behaviour.runs++;
    behaviour.running++;
    behaviour.maxRunning = Math.max(behaviour.maxRunning, behaviour.running);
    try {
      const stream = tunerRunStream(projectId!, coordinatorJobId);
      const planned = ((await events.readStream(stream)) as unknown as TunerRunEvent[]).find((e) => e.type === 'TunerTrialPlanned' && e.data.trial === trial);
      if (planned?.type !== 'TunerTrialPlanned') throw new Error(`trial ${trial} is not planned`);
      log(`test double: trial ${trial}`);
      await sleep(behaviour.slowTrials.has(trial) ? 60_000 : behaviour.delayMs, undefined, { signal });
      if (behaviour.failTrials.has(trial)) throw new Error(`test double: trial ${trial} fails`);
      const neurons = planned.data.impulse.learn.denseLayers.reduce((a, b) => a + b, 0);
      await handleCommand(
        events,
        stream,
        tunerRunDecider,
        {
          type: 'FinishTrial',
          data: {
            projectId: projectId!, coordinatorJobId, trial, status: 'completed', accuracy: doubleAccuracy(trialKey(planned.data.impulse)), loss: 0.5, error: null, now: new Date(),
            estimates: { latencyMs: 5, ramBytes: 1000 * neurons, romBytes: 4000 * neurons },
          },
        },
        { actor: 'system:test-trial-double', correlationId: 'test', now: new Date() },
      );
    } finally {
      behaviour.running--;
    }
  };
}
