import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VersionCreated } from '../../domain/version/versionEvents';
import { projectWithFeatures, trainBoth, withTrainingFeatures, type ProjectWithFeatures } from '../support/projectWithFeatures';
import { readModelsCaughtUp } from '../support/readModels';

// A version of a trained, tested project covers its features, its two trained models with their
// accuracy and the model testing accuracy; retraining afterwards leaves the version as it was.
describe('a version of a trained project', () => {
  let p: ProjectWithFeatures;
  beforeAll(async () => {
    p = await projectWithFeatures({ mongo: false, name: 'Versioned' });
    await p.ingest('testing', 'idle', 7);
    await p.ingest('testing', 'wave', 7);
    await withTrainingFeatures(p);
    await trainBoth(p);
    await p.runJob('/jobs/classify');
  }, 180_000);
  afterAll(async () => {
    await p?.service.destroy();
  });

  const recorded = async (): Promise<VersionCreated['data'][]> =>
    ((await p.service.stores.events.readStream(`versions-${p.projectId}`)) as unknown as VersionCreated[]).filter((e) => e.type === 'VersionCreated').map((e) => e.data);

  it('names the features, both trained models and their accuracies, and lists the accuracies', async () => {
    await p.runJob('/jobs/version', { description: 'trained', makePublic: false });
    await readModelsCaughtUp(p.service);
    const [version] = await recorded();
    const keras = (await p.service.stores.events.readStream(`keras-${p.projectId}-3`)).filter((e) => e.type === 'KerasModelTrained').at(-1)!.data as { model: string; validation: { accuracy: number } };
    const anomaly = (await p.service.stores.events.readStream(`anomaly-${p.projectId}-4`)).filter((e) => e.type === 'AnomalyModelTrained').at(-1)!.data as { model: string };
    expect(version!.contents.models).toEqual([
      { learnId: 3, type: 'keras', model: keras.model, accuracy: keras.validation.accuracy },
      { learnId: 4, type: 'anomaly', model: anomaly.model, accuracy: null },
    ]);
    expect(version!.contents.features.length).toBeGreaterThan(0);
    expect(version!.contents.samples.count).toBe(6);
    expect(version!.contents.testAccuracy).toEqual(expect.any(Number));
    const list = await p.get('/versions');
    expect((list.body.versions as unknown[])[0]).toMatchObject({ version: 1, trainingAccuracy: keras.validation.accuracy, testAccuracy: version!.contents.testAccuracy, totalSamplesCount: '6' });
  }, 120_000);

  it('keeps naming the model it covered after the block is retrained, and the next version names the new one', async () => {
    await p.runJob('/jobs/train/keras/3', { trainingCycles: 5, learningRate: 0.02 });
    await p.runJob('/jobs/version', { description: 'retrained', makePublic: false });
    const [first, second] = await recorded();
    const newest = (await p.service.stores.events.readStream(`keras-${p.projectId}-3`)).filter((e) => e.type === 'KerasModelTrained').at(-1)!.data as { model: string };
    expect(second!.contents.models[0]!.model).toBe(newest.model);
    expect(first!.contents.models[0]!.model).not.toBe(newest.model);
    expect(second!.contents.impulses).toBe(first!.contents.impulses);
    expect(second!.contents.samples.digest).toBe(first!.contents.samples.digest);
  }, 120_000);
});
