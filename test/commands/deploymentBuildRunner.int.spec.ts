import { describe, expect, it, vi } from 'vitest';
import { deploymentBuildRunner, type DeploymentBuildDeps } from '../../commands/deployment/buildDeployment';
import type { JobRunContext } from '../../commands/jobs/jobRunners';
import type { ThreadPool } from '../../commands/jobs/threadPool';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';

const sha = (c: string) => c.repeat(64);
const impulse = { id: 5, learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', dsp: [2] }, { id: 4, type: 'anomaly', name: 'Anomaly', dsp: [2] }] } as unknown as ImpulseDocument;

function setup(overrides: Partial<DeploymentBuildDeps> = {}) {
  const appended = vi.fn(async () => ({ position: 1n, revision: 0n }));
  const put = vi.fn(async (bytes: Buffer) => ({ sha256: sha('e'), size: bytes.length }));
  const builder = vi.fn(async () => new TextEncoder().encode('artifact'));
  const deps = {
    events: { readStream: vi.fn(async () => []), appendToStream: appended },
    blobs: { put },
    projects: { byId: async () => ({ name: 'Motion Demo' }) },
    impulses: { byId: async () => impulse },
    kerasModels: { byLearnBlock: async () => ({ model: { model: sha('a') } }) },
    anomalyModels: { byLearnBlock: async () => ({ model: { model: sha('b') } }) },
    runtimeSpec: vi.fn(async () => ({ spec: true })),
    builders: { 'runner-linux-x86_64': builder },
    ...overrides,
  } as unknown as DeploymentBuildDeps;
  return { deps, appended, put, builder };
}

const context = (parameters: Record<string, unknown>): JobRunContext & { lines: string[] } => {
  const lines: string[] = [];
  return { jobId: 11, projectId: 1, organizationId: null, parameters, log: (l) => lines.push(l), signal: new AbortController().signal, pool: {} as ThreadPool, lines };
};

describe('the build-ondevice-model runner', () => {
  it('builds from the runtime spec, stores the artifact and records it with the models and version', async () => {
    const { deps, appended, put, builder } = setup();
    const job = context({ type: 'runner-linux-x86_64', engine: 'tflite', impulseId: 5, version: 12 });
    await deploymentBuildRunner(deps)(job);
    expect(builder).toHaveBeenCalledWith({ spec: { spec: true }, project: { id: 1, name: 'Motion Demo', owner: '', deployVersion: 12 }, engine: 'tflite' });
    expect(put).toHaveBeenCalledTimes(1);
    const [stream, events] = appended.mock.calls[0] as unknown as [string, { type: string; data: Record<string, unknown> }[]];
    expect(stream).toBe('deployment-1');
    expect(events[0]).toMatchObject({
      type: 'DeploymentBuilt',
      data: { projectId: 1, impulseId: 5, jobId: 11, version: 12, type: 'runner-linux-x86_64', engine: 'tflite', artifact: sha('e'), size: 8, fileName: 'motion-demo-v12-linux-x86_64.eim', models: [{ learnId: 3, type: 'keras', model: sha('a') }, { learnId: 4, type: 'anomaly', model: sha('b') }] },
    });
    expect(job.lines.join('\n')).toMatch(/Built motion-demo-v12-linux-x86_64.eim: 8 bytes/);
  });

  it('fails naming the block when a model is gone since the request, building and recording nothing', async () => {
    const { deps, appended, builder } = setup({ anomalyModels: { byLearnBlock: async () => null } });
    await expect(deploymentBuildRunner(deps)(context({ type: 'runner-linux-x86_64', engine: 'tflite', impulseId: 5, version: 1 }))).rejects.toThrow(/No trained model for learn block 4 \("Anomaly"\)/);
    expect(builder).not.toHaveBeenCalled();
    expect(appended).not.toHaveBeenCalled();
  });

  it('fails for a type this process has no builder for', async () => {
    const { deps, appended } = setup();
    await expect(deploymentBuildRunner(deps)(context({ type: 'wasm', engine: 'tflite', impulseId: 5, version: 1 }))).rejects.toThrow(/No builder for deployment type "wasm"/);
    expect(appended).not.toHaveBeenCalled();
  });
});
