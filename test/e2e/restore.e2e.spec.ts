import { EdgeImpulseApi } from 'edge-impulse-api';
import { describe, expect, it } from 'vitest';
import { classifierBlock, ingestSample, motionInputBlock, sdkProjectForSuite, sineRows, spectralBlock } from '../support/projectWithFeatures';
import { readModelsCaughtUp } from '../support/readModels';

// The official SDK, unmodified: train a small project, version it (JobsApi.startVersionJob), change
// it (a sample deleted, features regenerated, the classifier retrained), restore the version into
// another project (JobsApi.startRestoreJob) and classify the same sample there: the answer the
// versioned model gave. Refusals (strangers, other keys, the own project, a project with data, a
// deleted version) answer 4xx and start no job.
describe('restoring a version through the official SDK', () => {
  const project = sdkProjectForSuite('Restore source');
  const impulse = { name: 'Motion', inputBlocks: [{ ...motionInputBlock, windowSizeMs: 1000 }], dspBlocks: [spectralBlock], learnBlocks: [classifierBlock, { id: 4, type: 'anomaly', name: 'Anomaly detection', title: 'Anomaly detection (K-means)', dsp: [2] }] };
  const state: { versionId?: number; testSampleId?: number; classified?: unknown; samples?: unknown[]; target?: number } = {};

  const run = async (api: EdgeImpulseApi, projectId: number, jobId: number) => {
    const output: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => output.push(line));
    await readModelsCaughtUp(project().service);
    return output.join('');
  };
  const features = async (projectId: number) => run(project().api, projectId, (await project().api.jobs.generateFeaturesJob(projectId, { dspId: 2, skipFeatureExplorer: true })).id);
  const train = async (projectId: number, trainingCycles: number) => {
    const { api } = project();
    await api.learn.setKeras(projectId, 3, { trainingCycles, learningRate: 0.01 });
    await run(api, projectId, (await api.jobs.trainKerasJob(projectId, 3, {})).id);
  };
  /** What a sample list says, ids and the project's own fields aside (the stored file's name starts with the project id). */
  const listed = async (projectId: number) =>
    (await project().api.rawData.listSamples(projectId, { category: 'training' })).samples
      .concat((await project().api.rawData.listSamples(projectId, { category: 'testing' })).samples)
      .map(({ id: _id, projectId: _p, coldstorageFilename, ...rest }) => ({ ...rest, file: coldstorageFilename.split('/').at(-1) }))
      .sort((a, b) => (a.filename < b.filename ? -1 : 1));
  const jobCount = async (projectId: number, api = project().api) => (await api.jobs.listAllJobs(projectId, {})).totalJobCount;

  it('versions a trained project, and the project changes after', async () => {
    const { api, projectId, service, apiKey } = project();
    await api.impulse.createImpulse(projectId, impulse as Parameters<typeof api.impulse.createImpulse>[1]);
    const ingest = (category: 'training' | 'testing', label: string, rows: number[][], fileName: string) => ingestSample(service, apiKey, { category, label, rows, fileName });
    for (const [label, f] of [['idle', 1], ['wave', 9]] as const) {
      await ingest('training', label, sineRows(f, 400), `${label}-1.json`);
      await ingest('training', label, sineRows(f, 400, 1), `${label}-2.json`);
    }
    await ingest('testing', 'wave', sineRows(8, 400, 2), 'wave-test.json');
    await features(projectId);
    await train(projectId, 10);
    await run(api, projectId, (await api.jobs.trainAnomalyJob(projectId, 4, { axes: [0, 1, 2], clusterCount: 2, minimumConfidenceRating: 0.3 })).id);
    const testing = (await api.rawData.listSamples(projectId, { category: 'testing' })).samples[0]!;
    state.testSampleId = testing.id;
    state.classified = (await api.classify.classifySample(projectId, testing.id)).classifications;
    state.samples = await listed(projectId);

    // Model testing runs first, in the version job; the version records its accuracy.
    const { id: jobId } = await api.jobs.startVersionJob(projectId, { description: 'trained', makePublic: false, runModelTestingWhileVersioning: true });
    const accuracy = Number(/Model testing done: accuracy (\d+\.\d+)%/.exec(await run(api, projectId, jobId))![1]) / 100;
    const [made] = (await api.projects.listVersions(projectId)).versions;
    expect(made!.testAccuracy).toBeCloseTo(accuracy, 4);
    state.versionId = made!.id;

    // The source changes: a sample deleted, features regenerated, the classifier retrained longer.
    const idle2 = (await api.rawData.listSamples(projectId, { category: 'training' })).samples.find((s) => s.filename.startsWith('idle-2'))!;
    await api.rawData.deleteSample(projectId, idle2.id);
    await features(projectId);
    await train(projectId, 25);
    expect(await listed(projectId)).not.toEqual(state.samples);
    // Else a restore that took the latest model would pass for one that took the version's.
    expect((await api.classify.classifySample(projectId, testing.id)).classifications).not.toEqual(state.classified);
  }, 60_000);

  it('refuses a restore the caller may not make: 404 for a stranger, another project\'s key and a wrong key; 400 into the own project; nothing started', async () => {
    const { service, api, projectId } = project();
    const bob = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await bob.user.createUser({ name: 'Bob', username: 'bob', email: 'bob@example.com', password: 'correct horse battery', privacyPolicy: true, turnstileResponse: 'ok' });
    await bob.authenticate({ method: 'jwtToken', jwtToken: (await bob.login.login({ username: 'bob', password: 'correct horse battery' })).token! });
    const { id: bobsProject, apiKey: bobsKey } = await bob.projects.createProject({ projectName: 'Bob\'s' });
    const versionId = state.versionId!;
    const before = await jobCount(projectId);
    for (const request of [
      { projectId, versionId },
      { projectId, versionId, projectApiKey: bobsKey },
      { projectId, versionId, projectApiKey: 'ei_0123456789abcdef' },
      { projectId, versionId: versionId + 1000 },
      { projectId: 999_999, versionId },
    ]) {
      await expect(bob.jobs.startRestoreJob(bobsProject, request)).rejects.toThrow(/No version \d+ of project \d+ is readable with these credentials/);
    }
    await expect(api.jobs.startRestoreJob(projectId, { projectId, versionId })).rejects.toThrow(/into another project/);
    await expect(bob.jobs.startRestoreJob(bobsProject, { projectId: -1, versionId })).rejects.toThrow(/projectId/);
    await expect(bob.jobs.startRestoreJob(bobsProject, { projectId, versionId: 2 ** 60 })).rejects.toThrow(/versionId/);
    // Ada's project is not Bob's to restore into.
    await expect(api.jobs.startRestoreJob(bobsProject, { projectId, versionId })).rejects.toThrow(/not a collaborator/);
    expect(await jobCount(bobsProject, bob)).toBe(0);
    expect(await jobCount(projectId)).toBe(before);
  });

  it('restores the version into another project: the same samples, impulse and models; its classifier answers as the versioned one did', async () => {
    const { api, projectId } = project();
    const { id: target } = await api.projects.createProject({ projectName: 'Restored' });
    state.target = target;
    const { id: jobId } = (await api.jobs.startRestoreJob(target, { projectId, versionId: state.versionId! })) as unknown as { id: number };
    expect(await run(api, target, jobId)).toMatch(/Restored 5 samples \(5 files\), 1 impulses, \d+ feature files and 2 trained models; nothing was copied/);

    expect(await listed(target)).toEqual(state.samples);
    const restoredImpulse = (await api.impulse.getImpulse(target)).impulse!;
    expect(restoredImpulse).toMatchObject({ name: 'Motion', dspBlocks: [{ type: 'spectral-analysis' }], learnBlocks: [{ type: 'keras' }, { type: 'anomaly' }] });
    const learnId = restoredImpulse.learnBlocks[0]!.id;
    expect((await api.learn.getKeras(target, learnId)).trained).toBe(true);
    const testing = (await api.rawData.listSamples(target, { category: 'testing' })).samples[0]!;
    expect(testing.id).not.toBe(state.testSampleId);
    expect((await api.classify.classifySample(target, testing.id)).classifications).toEqual(state.classified);

    // The target's history says where it came from: the restore job, caused by the version's record.
    const { service } = project();
    const [versionRecord] = (await service.stores.events.readStream(`versions-${projectId}`)).filter((e) => e.type === 'VersionCreated');
    for (const stream of [`impulses-${target}`, `sample-${testing.id}`, `keras-${target}-${learnId}`]) {
      const restored = (await service.stores.events.readStream(stream)).filter((e) => e.metadata.correlationId === `restore-${jobId}`);
      expect(restored.length, stream).toBeGreaterThan(0);
      for (const e of restored) expect(e.metadata).toMatchObject({ actor: 'system:restore', causationId: versionRecord!.id });
    }
  });

  it('refuses a second restore into the project that now holds data, and a deleted version\'s restore; the target keeps what it has', async () => {
    const { api, projectId } = project();
    const target = state.target!;
    await expect(api.jobs.startRestoreJob(target, { projectId, versionId: state.versionId! })).rejects.toThrow(/holds samples/);
    await api.projects.updateVersion(projectId, state.versionId!, { description: 'trained, restored once' });
    expect((await api.projects.listVersions(projectId)).versions[0]).toMatchObject({ description: 'trained, restored once' });
    await api.projects.deleteVersion(projectId, state.versionId!);
    const { id: empty } = await api.projects.createProject({ projectName: 'Empty' });
    await expect(api.jobs.startRestoreJob(empty, { projectId, versionId: state.versionId! })).rejects.toThrow(/No version \d+ of project \d+ is readable/);
    expect(await jobCount(empty)).toBe(0);
    expect(await listed(target)).toEqual(state.samples);
  });
});
