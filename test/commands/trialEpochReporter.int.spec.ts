// A trial's epochs go to its run's stream in batches: one append for many epochs, in order, none lost;
// a refusal (the run ended) is reported once and stops further sends.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handleCommand } from '../../commands/handleCommand';
import { systemContext } from '../../commands/commandContext';
import { TrialEpochReporter } from '../../commands/optimize/trialEpochReporter';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import { tunerRunDecider, type TunerRunCommand } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream } from '../../domain/optimize/tunerRunEvents';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const run = { projectId: 3, coordinatorJobId: 40 };
const stream = tunerRunStream(3, 40);
const epoch = (n: number) => ({ epoch: n, loss: 1 / n, accuracy: 0.5, valLoss: 1 / n, valAccuracy: 0.5 });
let store: SqliteEventStore | undefined;
afterEach(async () => {
  await store?.close();
});

async function startedTrial(): Promise<SqliteEventStore> {
  store = SqliteEventStore.open(':memory:');
  const send = (command: TunerRunCommand) => handleCommand(store!, stream, tunerRunDecider, command, systemContext('test'));
  const now = new Date();
  await send({ type: 'StartTunerRun', data: { ...run, index: 1, name: 'Run', config: { ...DEFAULT_OPTIMIZE_SETTINGS, trainingCycles: 1000 }, space: [], seed: 1, extendedFromJobId: null, now } });
  await send({ type: 'PlanTrials', data: { ...run, trials: [{ trial: 0, impulse: { window: { windowSizeMs: 500, windowIncreaseMs: 100 }, dsp: { type: 'flatten', config: {} }, learn: { type: 'keras', denseLayers: [8], learningRate: 0.01, trainingCycles: 1000, batchSize: 8 } }, round: null }], now } });
  await send({ type: 'StartTrial', data: { ...run, trial: 0, jobId: 41, now } });
  return store;
}

const epochEvents = async (events: SqliteEventStore) => (await events.readStream(stream)).filter((e) => e.type === 'TunerTrialEpoch');

describe('the trial epoch reporter', () => {
  it('sends the epochs that waited together: 150 epochs in two appends, in order', async () => {
    const events = await startedTrial();
    const append = vi.spyOn(events, 'appendToStream');
    const reporter = new TrialEpochReporter(events, { ...run, trial: 0, jobId: 41 }, () => undefined, 60_000);
    for (let n = 1; n <= 150; n++) reporter.add(epoch(n));
    await reporter.flush();
    expect(append).toHaveBeenCalledTimes(2);
    expect((await epochEvents(events)).map((e) => e.data.epoch)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
  });

  it('sends on its own once the interval passed', async () => {
    const events = await startedTrial();
    const reporter = new TrialEpochReporter(events, { ...run, trial: 0, jobId: 41 }, () => undefined, 20);
    reporter.add(epoch(1));
    reporter.add(epoch(2));
    await vi.waitFor(async () => expect((await epochEvents(events)).map((e) => e.data.epoch)).toEqual([1, 2]), { timeout: 5000 });
  });

  it('reports a refusal once (the trial run by another job) and sends nothing after it', async () => {
    const events = await startedTrial();
    const refused = vi.fn();
    const reporter = new TrialEpochReporter(events, { ...run, trial: 0, jobId: 99 }, refused, 60_000);
    reporter.add(epoch(1));
    await reporter.flush();
    reporter.add(epoch(2));
    await reporter.flush();
    expect(refused).toHaveBeenCalledOnce();
    expect(reporter.failure?.message).toMatch(/run by job 41, not by job 99/);
    expect(await epochEvents(events)).toEqual([]);
  });
});
