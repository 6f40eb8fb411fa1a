// A project's full deletion purges every blob derived from its samples (features, keras models, the
// superseded ones too, anomaly model, model testing results, deployment builds), not only the
// samples' own; content another live project's records name (even a superseded record) stays. Features, both keras models, the
// anomaly model and the model testing results are made by the real jobs; the deployment is recorded
// with its command (a real build is covered by test/e2e/eimRunner.e2e.spec.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemContext } from '../../commands/commandContext';
import { handleCommand } from '../../commands/handleCommand';
import { deploymentDecider } from '../../domain/deployment/deploymentDecider';
import { deploymentStream, type DeploymentBuilt } from '../../domain/deployment/deploymentEvents';
import { dspFeaturesStream, type DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import { anomalyStream, type AnomalyModelTrained } from '../../domain/learn/anomalyEvents';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { modelTestingDecider } from '../../domain/learn/modelTestingDecider';
import { modelTestingStream, type ModelTested } from '../../domain/learn/modelTestingEvents';
import { projectWithFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { readModelsCaughtUp } from '../support/readModels';
import { blobBytes, call, describeOn, setups } from '../support/testService';

const day = 24 * 3600_000;

for (const setup of setups) {
  describeOn(setup, 'the full deletion of a project with derived blobs', () => {
    let p: ProjectWithFeatures;
    beforeAll(async () => {
      p = await projectWithFeatures({ mongo: setup.mongo, name: 'Doomed' });
    });
    afterAll(async () => {
      await p?.service.destroy();
    });

    it('purges its features, models (superseded ones too), test results and builds; content another live project names stays', async () => {
      const { service, projectId } = p;
      const events = service.stores.events;
      const blobs = service.stores.blobs;
      for (const label of ['idle', 'wave']) {
        for (const seed of [0, 1]) await p.ingest('training', label, seed);
        await p.ingest('testing', label, 7);
      }
      await p.runJob('/jobs/generate-features', { dspId: 2, skipFeatureExplorer: true });
      // Two trainings: the first model is superseded by the second, and must go as well.
      await p.runJob('/jobs/train/keras/3', { trainingCycles: 30, learningRate: 0.01 });
      await p.runJob('/jobs/train/keras/3', { trainingCycles: 10, learningRate: 0.02 });
      await p.runJob('/jobs/train/anomaly/4', { axes: [0, 1, 2], clusterCount: 2, minimumConfidenceRating: 0.3 });
      await p.runJob('/jobs/classify', {});

      const records = async <E>(stream: string, type: string) => (await events.readStream(stream)).filter((e) => e.type === type) as unknown as E[];
      const [features] = await records<DspFeaturesGenerated>(dspFeaturesStream(projectId, 2), 'DspFeaturesGenerated');
      const kerasModels = (await records<KerasModelTrained>(kerasStream(projectId, 3), 'KerasModelTrained')).map((e) => e.data.model);
      const [anomaly] = await records<AnomalyModelTrained>(anomalyStream(projectId, 4), 'AnomalyModelTrained');
      const [tested] = await records<ModelTested>(modelTestingStream(projectId), 'ModelTested');
      expect(kerasModels).toHaveLength(2);
      expect(kerasModels[0]).not.toBe(kerasModels[1]);
      // Two builds: the first is superseded by the second.
      const artifacts = [await blobs.put(Buffer.from('the first build of the doomed project')), await blobs.put(Buffer.from('its second build'))];
      const build = (artifactSha: string, jobId: number, version: number, id = projectId, model = kerasModels[1]!): DeploymentBuilt['data'] => ({
        projectId: id, impulseId: 1, jobId, version, type: 'wasm', engine: 'tflite', artifact: artifactSha, size: 1, fileName: 'build.zip', models: [{ learnId: 3, type: 'keras', model }], built: new Date().toISOString(),
      });
      for (const [i, artifact] of artifacts.entries()) {
        await handleCommand(events, deploymentStream(projectId), deploymentDecider, { type: 'RecordDeployment', data: build(artifact.sha256, 990 + i, 1 + i) }, systemContext('test'));
      }

      const { categories } = features!.data;
      const derived = {
        trainingX: categories.training.x, trainingY: categories.training.y, trainingRaw: categories.training.raw!,
        testingX: categories.testing.x, testingY: categories.testing.y, testingRaw: categories.testing.raw!, metadata: features!.data.metadata,
        supersededKeras: kerasModels[0]!, keras: kerasModels[1]!, anomaly: anomaly!.data.model, testResults: tested!.data.results,
        supersededArtifact: artifacts[0]!.sha256, artifact: artifacts[1]!.sha256,
      };
      expect(new Set(Object.values(derived)).size).toBe(Object.keys(derived).length);
      for (const sha of Object.values(derived)) expect(await blobs.stat(sha)).toBeDefined();

      // Another live project holds identical bytes: the latest build's content names its latest test
      // results, the testing raw windows' content a build of its that a later one superseded.
      const survivor = await call(service, 'POST', '/api/projects/create', { headers: p.ada, body: { projectName: 'Survivor' } });
      const survivorId = Number(survivor.body.id);
      await handleCommand(events, modelTestingStream(survivorId), modelTestingDecider, {
        type: 'RecordModelTest',
        data: { projectId: survivorId, impulseId: 1, jobId: 995, results: derived.artifact, summary: { sampleCount: 0, skippedSampleCount: 0, windowCount: 0, accuracy: null, balancedAccuracy: null }, tested: new Date().toISOString() },
      }, systemContext('test'));
      const survivorArtifact = await blobs.put(Buffer.from('the survivor\'s current build'));
      for (const [i, artifact] of [derived.testingRaw, survivorArtifact.sha256].entries()) {
        await handleCommand(events, deploymentStream(survivorId), deploymentDecider, { type: 'RecordDeployment', data: build(artifact, 996 + i, 1 + i, survivorId, survivorArtifact.sha256) }, systemContext('test'));
      }
      const kept = [derived.artifact, derived.testingRaw];
      const doomedOnly = Object.entries(derived).filter(([, sha]) => !kept.includes(sha));

      expect((await call(service, 'DELETE', `/api/${projectId}`, { headers: p.ada })).status).toBe(200);
      await readModelsCaughtUp(service);
      await service.fullyDeleteDueProjects(new Date(Date.now() + 8 * day));
      const fully = (await events.readStream(`project-${projectId}`)).find((e) => e.type === 'ProjectFullyDeleted');
      expect(fully?.data.quarantinedBlobs).toEqual(expect.arrayContaining(doomedOnly.map(([, sha]) => sha)));
      for (const [name, sha] of doomedOnly) expect(await blobs.stat(sha), name).toBeUndefined();
      for (const sha of kept) expect(await blobs.stat(sha)).toBeDefined();

      await readModelsCaughtUp(service);
      await service.fullyDeleteDueProjects(new Date(Date.now() + 9 * day));
      const purged = (await events.readStream(`project-${projectId}`)).find((e) => e.type === 'ProjectBlobsPurged');
      expect(purged?.data.purged).toEqual(expect.arrayContaining(doomedOnly.map(([, sha]) => sha)));
      for (const [name, sha] of doomedOnly) {
        // Purged, not only set aside: a restore finds no bytes to bring back.
        await blobs.restore(sha);
        expect(await blobs.stat(sha), name).toBeUndefined();
        await expect(blobs.open(sha), name).rejects.toThrow();
      }
      for (const sha of kept) expect((await blobBytes(service, sha)).length).toBeGreaterThan(0);
      expect(await blobs.stat(survivorArtifact.sha256)).toBeDefined();
    });
  });
}
