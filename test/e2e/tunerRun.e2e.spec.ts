import { describe, expect, it } from 'vitest';
import { classifierBlock, motionInputBlock, motionRows, sdkProjectForSuite, spectralBlock } from '../support/projectWithFeatures';

// The official SDK, unmodified, against the production job runners (no test double): a tuner run of
// three real trials (features computed in memory, a small dense model trained and evaluated, estimates
// for the target device) followed to completion with runJobUntilCompletion, its state and the runs
// list, a rename, a trial added to the project, and a second run cancelled mid-way.
describe('a tuner run through the official SDK', () => {
  const project = sdkProjectForSuite('Tuner run through the SDK');
  const device = { name: 'cortex-m4f-80mhz', ram: 131072, rom: 1048576 };
  /** 2 windows x 1 FFT length x 2 dense stacks: four combinations, three trials drawn from them. */
  const space = {
    inputBlocks: [{ type: 'time-series', window: [{ windowSizeMs: 500, windowIncreaseMs: 250 }, { windowSizeMs: 1000, windowIncreaseMs: 250 }] }],
    dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [16] }],
    learnBlocks: [[{ type: 'keras', dimension: [[8], [16, 8]], learningRate: [0.01], trainingCycles: [4] }]],
  };
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
    for (let i = 0; ; i++) {
      const value = await read();
      if (done(value) || i === 100) return value;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('refuses to start without training data of two classes, and starts no job', async () => {
    const { api, projectId } = project();
    await api.impulse.createImpulse(projectId, { name: 'Motion', inputBlocks: [motionInputBlock], dspBlocks: [spectralBlock], learnBlocks: [classifierBlock] } as Parameters<typeof api.impulse.createImpulse>[1]);
    await expect(api.jobs.optimizeJob(projectId)).rejects.toThrow(/training data/i);
    expect((await api.jobs.listAllJobs(projectId)).jobs).toEqual([]);
  });

  it('runs three trials to completion, lists and renames the run, and adds a trial to the project as an impulse', async () => {
    const { api, projectId, ingest } = project();
    for (let seed = 0; seed < 6; seed++) {
      await ingest('training', 'idle', motionRows('idle', seed));
      await ingest('training', 'wave', motionRows('wave', seed));
    }
    await api.optimization.updateConfig(projectId, { targetLatency: 100, targetDevice: device, tuningMaxTrials: 3, tuningWorkers: 2, trainingCycles: 4, tuningAlgorithm: 'random', space: [space] } as Parameters<typeof api.optimization.updateConfig>[1]);
    const { id: runId } = await api.jobs.optimizeJob(projectId);
    const output: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId: runId }, (line) => output.push(line));

    const state = await until(() => api.optimization.getTunerRunState(projectId, runId), (s) => s.status.status === 'completed');
    expect(state).toMatchObject({ tunerCoordinatorJobId: runId, tunerJobIsRunning: false, status: { status: 'completed', numCompletedTrials: 3, numFailedTrials: 0, numRunningTrials: 0, numPendingTrials: 0 } });
    expect(state.trials).toHaveLength(3);
    // Three distinct impulses of the space, each trained for its 4 cycles and measured.
    expect(new Set(state.trials.map((t) => JSON.stringify(t.impulse))).size).toBe(3);
    for (const trial of state.trials) {
      expect(trial.status).toBe('completed');
      expect(trial.currentEpoch).toBe(4);
      const accuracy = (trial.impulse as { learnBlocks: { metadata?: { modelValidationMetrics?: { accuracy?: number }[] } }[] }).learnBlocks[0]!.metadata?.modelValidationMetrics?.[0]?.accuracy;
      expect(accuracy).toBeGreaterThan(0);
      expect(accuracy).toBeLessThanOrEqual(1);
    }

    const runs = await api.optimization.listTunerRuns(projectId);
    expect(runs.runs).toMatchObject([{ tunerCoordinatorJobId: runId, index: 1, jobStatus: 'success' }]);
    await api.optimization.updateTunerRun(projectId, runId, { name: 'Small windows' });
    expect((await until(() => api.optimization.listTunerRuns(projectId), (r) => r.runs[0]?.name === 'Small windows')).runs[0]!.name).toBe('Small windows');

    const { id: addJob } = await api.jobs.setTunerPrimaryJob(projectId, { name: 'From the tuner' }, { trialId: state.trials[0]!.id });
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId: addJob }, () => {});
    const { impulses } = await until(() => api.impulse.getAllImpulses(projectId), (r) => r.impulses.length === 2);
    expect(impulses.map((i) => i.name).sort()).toEqual(['From the tuner', 'Motion']);
  });

  it('cancels a run: the coordinator ends cancelled and no trial is left running', async () => {
    const { api, projectId } = project();
    await api.optimization.updateConfig(projectId, { targetLatency: 100, targetDevice: device, tuningMaxTrials: 4, tuningWorkers: 1, trainingCycles: 200, tuningAlgorithm: 'random', space: [{ ...space, learnBlocks: [[{ ...space.learnBlocks[0]![0]!, trainingCycles: [200] }]] }] } as Parameters<typeof api.optimization.updateConfig>[1]);
    const { id: runId } = await api.jobs.optimizeJob(projectId);
    await until(() => api.optimization.getTunerRunState(projectId, runId).catch(() => undefined), (s) => (s?.status.numRunningTrials ?? 0) > 0);
    await api.jobs.cancelJob(projectId, runId);
    const job = await until(() => api.jobs.getJobStatus(projectId, runId), (r) => r.job.finishedSuccessful !== undefined);
    expect(job.job.finishedSuccessful).toBe(false);
    const state = await until(() => api.optimization.getTunerRunState(projectId, runId), (s) => s.tunerJobIsRunning === false && s.status.numRunningTrials === 0);
    expect(state).toMatchObject({ tunerJobIsRunning: false, jobError: 'Cancelled', status: { numRunningTrials: 0, numPendingTrials: 0 } });
    expect((await api.optimization.listTunerRuns(projectId)).runs.find((r: { tunerCoordinatorJobId: number }) => r.tunerCoordinatorJobId === runId)).toMatchObject({ jobStatus: 'cancelled' });
    // The trial jobs end too: none of the project's jobs is still active.
    expect((await until(() => api.jobs.listActiveJobs(projectId), (r) => r.jobs.length === 0)).jobs).toEqual([]);
  });
});
