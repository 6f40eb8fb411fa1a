import { Readable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { JobRunContext } from '../../commands/jobs/jobRunners';
import { TaskAbortedError, ThreadPool } from '../../commands/jobs/threadPool';
import { anomalyTrainingRunner, type AnomalyTrainingDeps } from '../../commands/training/anomalyTraining';
import { encodeNpy } from '../../domain/dsp/npy';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';

const pool = new ThreadPool(1);
afterAll(() => pool.close());

const sha = (c: string) => c.repeat(64);
/** 40 windows of 3 features, two blobs. */
const x = encodeNpy('<f4', [40, 3], Array.from({ length: 120 }, (_, i) => (i % 3) + (Math.floor(i / 3) < 20 ? 0 : 10) + ((i * 37) % 11) / 100));
const impulse = { id: 5, learnBlocks: [{ id: 3, type: 'anomaly', name: 'Anomaly', title: 'K-means', dsp: [2], createdAt: '2026-01-01T00:00:00.000Z' }] } as unknown as ImpulseDocument;
const features = { dspId: 2, jobId: 9, featureCount: 3, sourcePosition: '42', categories: { training: { x: sha('a'), y: sha('b'), windowCount: 40 }, testing: { x: sha('c'), y: sha('d'), windowCount: 0 } } } as unknown as DspFeaturesDocument;

function setup() {
  const appended = vi.fn();
  const put = vi.fn(async () => ({ sha256: sha('e'), size: 1 }));
  const deps = {
    events: { readStream: vi.fn(async () => []), appendToStream: appended },
    blobs: { open: vi.fn(async () => Readable.from([Buffer.from(x)])), put },
    impulses: { forProject: async () => [impulse] },
    dspFeatures: { current: async () => features },
  } as unknown as AnomalyTrainingDeps;
  return { deps, appended, put };
}

type RunTask = (task: Parameters<ThreadPool['run']>[0], options?: { signal?: AbortSignal }) => Promise<unknown>;

const context = (controller: AbortController, runPool: RunTask): JobRunContext & { lines: string[] } => {
  const lines: string[] = [];
  return { jobId: 11, projectId: 1, organizationId: null, parameters: { learnId: 3, axes: [0, 2], clusterCount: 2, minimumConfidenceRating: 0.3, seed: 1 }, log: (l) => lines.push(l), signal: controller.signal, pool: { run: runPool } as unknown as ThreadPool, lines };
};

describe('the anomaly training runner', () => {
  it('stops when the job is cancelled during the fit: the thread is ended, and no model is stored or recorded', async () => {
    const { deps, appended, put } = setup();
    const controller = new AbortController();
    // Cancel as soon as the fit is handed to the pool.
    const job = context(controller, (task, options) => {
      const running = pool.run(task, options);
      controller.abort();
      return running;
    });
    await expect(anomalyTrainingRunner(deps)(job)).rejects.toBeInstanceOf(TaskAbortedError);
    expect(put).not.toHaveBeenCalled();
    expect(appended).not.toHaveBeenCalled();
    expect(job.lines.join('\n')).toMatch(/Training K-means: 2 clusters on axes 0, 2, seed 1/);
  });

  it('fails naming the problem when the features changed since the request: an axis beyond them', async () => {
    const { deps, appended } = setup();
    const job = context(new AbortController(), (task, options) => pool.run(task, options));
    job.parameters = { ...job.parameters, axes: [0, 3] };
    await expect(anomalyTrainingRunner(deps)(job)).rejects.toThrow(/Training failed: axis 3 is beyond the 3 features/);
    expect(appended).not.toHaveBeenCalled();
  });

  it('records the model it stored, with the features, settings and seed', async () => {
    const { deps, appended, put } = setup();
    (deps.events.appendToStream as ReturnType<typeof vi.fn>).mockResolvedValue({ position: 1n, revision: 0n });
    const job = context(new AbortController(), (task, options) => pool.run(task, options));
    await anomalyTrainingRunner(deps)(job);
    expect(put).toHaveBeenCalledOnce();
    const [stream, events] = appended.mock.calls[0]! as [string, { type: string; data: Record<string, unknown> }[]];
    expect(stream).toBe('anomaly-1-3');
    expect(events[0]).toMatchObject({ type: 'AnomalyModelTrained', data: { jobId: 11, impulseId: 5, model: sha('e'), seed: 1, clusterCount: 2, settings: { axes: [0, 2], clusterCount: 2 }, features: [{ dspId: 2, x: sha('a'), windowCount: 40, featureCount: 3, sourcePosition: '42' }] } });
  });
});
