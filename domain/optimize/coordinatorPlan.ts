// The tuner coordinator's decisions, pure: which trials a run searches (its candidates), and from the
// run's progress (its stream folded) the next step: plan trials, start planned ones as child jobs,
// wait for running ones, or end. Everything is a function of the log and the run's parameters, so a
// coordinator restarted mid-run decides exactly what the first one would have, and plans nothing twice.
import type { OptimizeSettings } from './optimizeConfig';
import { hyperbandBrackets, hyperbandSurvivors, randomTrials, trialKey, type HyperbandRound, type TrialImpulse } from './searchSpace';
import type { TunerSpaceImpulse } from './tunerSpace';
import type { TrialRound } from './tunerRunEvents';
import type { TrialProgress, TunerRunProgress } from './tunerRunProgress';

/** What a run searches, fixed when it starts. */
export interface RunPlan {
  algorithm: OptimizeSettings['tuningAlgorithm'];
  /** Fresh impulses in the seed's order (never one an earlier run of its lineage tried). */
  candidates: readonly TrialImpulse[];
  /** Hyperband's brackets (empty for random search). */
  brackets: readonly (readonly HyperbandRound[])[];
  /** At most this many trials requested or running at once. */
  capacity: number;
}

export interface PlannedTrial {
  trial: number;
  impulse: TrialImpulse;
  round: TrialRound | null;
}

export type CoordinatorStep =
  | { kind: 'plan'; trials: PlannedTrial[] }
  | { kind: 'start'; trials: number[] }
  /** Running trials' jobs: wait for one of them to finish. */
  | { kind: 'wait'; jobIds: number[] }
  | { kind: 'end'; status: 'completed' | 'failed'; error: string | null };

/** Trials running at once: the config's workers, at most the job workers' cores. */
export const runCapacity = (tuningWorkers: number, cores: number): number => Math.max(1, Math.min(tuningWorkers, cores));

const hyperbandTrainings = (brackets: readonly (readonly HyperbandRound[])[]): number => brackets.reduce((n, rounds) => n + rounds.reduce((m, r) => m + r.trials, 0), 0);

/**
 * Hyperband's brackets for a run of `maxTrials` trainings: every round of every bracket is a trial
 * (the config's trial count bounds the trainings, as each is a job), so the schedule is the largest
 * whose rounds add up to at most `maxTrials`.
 */
export function hyperbandSchedule(maxCycles: number, maxTrials: number): HyperbandRound[][] {
  for (let fresh = maxTrials; fresh > 1; fresh--) {
    const brackets = hyperbandBrackets(maxCycles, fresh);
    if (hyperbandTrainings(brackets) <= maxTrials) return brackets;
  }
  return hyperbandBrackets(maxCycles, 1);
}

/** How many fresh impulses a run needs: every trial for random search, the first rounds for hyperband. */
export function freshNeeded(algorithm: RunPlan['algorithm'], brackets: readonly (readonly HyperbandRound[])[], maxTrials: number): number {
  return algorithm === 'random' ? maxTrials : brackets.reduce((n, rounds) => n + (rounds[0]?.trials ?? 0), 0);
}

/**
 * Up to `count` impulses of the space that can run, in the order `seed` gives, leaving out those
 * `tried` names (trialKey) and models of a type the impulse has not. Runs extending one another share
 * a seed, and a longer list extends a shorter one, so an extension continues where its lineage ended.
 */
export function candidateTrials(space: readonly TunerSpaceImpulse[], seed: number, count: number, frequencyHz: number | undefined, learnTypes: readonly string[], tried: ReadonlySet<string>): TrialImpulse[] {
  return randomTrials(space, tried.size + count, seed, frequencyHz)
    .filter((t) => !tried.has(trialKey(t)) && learnTypes.includes(t.learn.type))
    .slice(0, count);
}

const byTrial = (a: TrialProgress, b: TrialProgress) => a.trial - b.trial;
const done = (t: TrialProgress) => t.status === 'completed' || t.status === 'failed';

function randomNext(trials: readonly TrialProgress[], plan: RunPlan, free: number): PlannedTrial[] {
  return plan.candidates.slice(trials.length, trials.length + free).map((impulse, i) => ({ trial: trials.length + i, impulse, round: null }));
}

/**
 * The next round to plan, bracket by bracket: a round is planned once every trial of the round before
 * it (same bracket) ended, with hyperbandSurvivors of that round; a bracket whose round runs lets the
 * next bracket start, so free workers are used. First rounds take the candidates in schedule order.
 */
function hyperbandNext(trials: readonly TrialProgress[], plan: RunPlan): PlannedTrial[] {
  let offset = 0;
  for (const [b, rounds] of plan.brackets.entries()) {
    const firstSize = rounds[0]?.trials ?? 0;
    const fresh = plan.candidates.slice(offset, offset + firstSize);
    offset += firstSize;
    for (const [i, r] of rounds.entries()) {
      const these = trials.filter((t) => t.round?.bracket === b && t.round.round === i);
      if (these.length > 0) {
        if (these.every(done)) continue;
        break; // this bracket waits for its round; the next bracket may start
      }
      const round = { bracket: b, round: i, cycles: r.cycles };
      const impulses =
        i === 0
          ? fresh
          : hyperbandSurvivors(
              trials.filter((t) => t.round?.bracket === b && t.round.round === i - 1).map((t) => ({ index: t.trial, accuracy: t.accuracy, overBudget: t.overBudget })),
              r.trials,
            ).map((n) => trials.find((t) => t.trial === n)!.impulse);
      if (impulses.length === 0) break; // no candidates left, or no survivor: the bracket ends here
      return impulses.map((impulse, k) => ({ trial: trials.length + k, impulse, round }));
    }
  }
  return [];
}

/** The coordinator's next step for a run that has started. */
export function nextStep(progress: TunerRunProgress, plan: RunPlan): CoordinatorStep {
  const trials = [...progress.trials.values()].sort(byTrial);
  const running = trials.filter((t) => t.status === 'running');
  const pending = trials.filter((t) => t.status === 'pending');
  const free = plan.capacity - running.length;
  if (free > 0 && pending.length > 0) return { kind: 'start', trials: pending.slice(0, free).map((t) => t.trial) };
  if (free > 0) {
    const next = plan.algorithm === 'random' ? randomNext(trials, plan, free) : hyperbandNext(trials, plan);
    if (next.length > 0) return { kind: 'plan', trials: next };
  }
  if (running.length > 0 || pending.length > 0) return { kind: 'wait', jobIds: running.map((t) => t.jobId!) };
  if (trials.length === 0) return { kind: 'end', status: 'failed', error: 'The space holds no trial this project can run' };
  if (trials.every((t) => t.status === 'failed')) return { kind: 'end', status: 'failed', error: `Every trial failed (${trials.length})` };
  return { kind: 'end', status: 'completed', error: null };
}
