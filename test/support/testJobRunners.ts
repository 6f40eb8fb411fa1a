// Job runners for tests only, given to the service beside the production ones: in-process through
// startTestService({ jobRunners: withTestJobRunners }), in a child process through the test entry
// point test/support/testServiceMain.ts. Production code never imports this file.
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobRunner } from '../../commands/jobs/jobRunners';
import type { Stores } from '../../service/composition';
import { productionJobRunners } from '../../service/roles/productionJobRunners';
import { TUNER_TRIAL } from '../../commands/optimize/tunerCoordinator';
import { trialDoubleBehaviour, tunerTrialDouble } from './tunerTrialDouble';

const number = (value: unknown, fallback: number): number => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);

/**
 * `test-lines`: writes `lines` lines ("line 1" ...), `delayMs` apart, at `level`, stopping when its
 * signal aborts; then fails with `failWith` when given.
 */
export const linesRunner: JobRunner = async ({ parameters, log, signal }) => {
  const lines = number(parameters.lines, 3);
  const delayMs = number(parameters.delayMs, 0);
  const level = (['error', 'warn', 'info', 'debug'] as const).find((l) => l === parameters.level) ?? 'info';
  for (let i = 1; i <= lines; i++) {
    signal.throwIfAborted();
    log(`line ${i}`, level);
    if (delayMs > 0) await sleep(delayMs, undefined, { signal });
  }
  if (typeof parameters.failWith === 'string') throw new Error(parameters.failWith);
};

/** `test-cpu`: spins a pool thread for `ms` milliseconds (a busy loop that checks nothing). */
export const cpuRunner: JobRunner = async ({ parameters, log, signal, pool }) => {
  log('spinning');
  const result = await pool.run<{ threadId: number }>({ module: new URL('./poolTasks.ts', import.meta.url), name: 'spin', input: { ms: number(parameters.ms, 100) } }, { signal });
  log(`spun on thread ${result.threadId}`);
};

/** `test-stubborn`: waits `ms` milliseconds ignoring its signal, as a runner that never answers would. */
export const stubbornRunner: JobRunner = async ({ parameters, log }) => {
  log('not listening');
  await sleep(number(parameters.ms, 5000));
};

/** The test runners by category key. */
export const testJobRunners: ReadonlyMap<string, JobRunner> = new Map([
  ['test-lines', linesRunner],
  ['test-cpu', cpuRunner],
  ['test-stubborn', stubbornRunner],
]);

/** The production runners and the test ones: a StartOptions.jobRunners for a service under test. */
export function withTestJobRunners(stores: Stores): Map<string, JobRunner> {
  // The tuner's trial double replaces the trial runner only where a test asks for it (a service process's env).
  const delayMs = Number(process.env.TEST_TUNER_TRIAL_DOUBLE);
  const double: [string, JobRunner][] = delayMs > 0 ? [[TUNER_TRIAL, tunerTrialDouble(stores.events, trialDoubleBehaviour(delayMs))]] : [];
  return new Map([...productionJobRunners(stores), ...testJobRunners, ...double]);
}
