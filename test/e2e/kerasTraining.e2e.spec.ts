import { describe, expect, it } from 'vitest';
import { classifierBlock, motionInputBlock, sdkProjectForSuite, sineRows, spectralBlock } from '../support/projectWithFeatures';
import { readModelsCaughtUp } from '../support/readModels';

// The official SDK, unmodified: set the keras block's settings (LearnApi.setKeras), train it
// (JobsApi.trainKerasJob) and follow the job with runJobUntilCompletion, then read getKeras and
// getKerasMetadata; expert mode through the SDK is refused.
describe('keras training through the official SDK', () => {
  const project = sdkProjectForSuite('Keras through the SDK');
  const signal = (f: number, n: number) => sineRows(f, n);

  it('sets settings, trains with runJobUntilCompletion following the epochs, and reads the model metadata', async () => {
    const { service, api, projectId, ingest } = project();
    const impulse = { name: 'Motion', inputBlocks: [{ ...motionInputBlock, windowSizeMs: 1000 }], dspBlocks: [spectralBlock], learnBlocks: [classifierBlock] };
    await api.impulse.createImpulse(projectId, impulse as Parameters<typeof api.impulse.createImpulse>[1]);
    await ingest('training', 'idle', signal(1, 600));
    await ingest('training', 'wave', signal(9, 600));
    const features = await api.jobs.generateFeaturesJob(projectId, { dspId: 2, skipFeatureExplorer: true });
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId: features.id }, () => undefined);
    await readModelsCaughtUp(service);

    await expect(api.learn.setKeras(projectId, 3, { mode: 'expert', script: 'import tensorflow' })).rejects.toThrow(/visual mode is supported/);
    await api.learn.setKeras(projectId, 3, { trainingCycles: 15, learningRate: 0.005, minimumConfidenceRating: 0.5 });
    const settings = await api.learn.getKeras(projectId, 3);
    expect(settings).toMatchObject({ mode: 'visual', trainingCycles: 15, learningRate: 0.005, minimumConfidenceRating: 0.5, trained: false, visualLayers: [{ type: 'dense', neurons: 20 }, { type: 'dense', neurons: 10 }] });

    const { id: jobId } = await api.jobs.trainKerasJob(projectId, 3, { batchSize: 16 });
    const output: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => output.push(line));
    const log = output.join('');
    expect(log).toMatch(/Epoch 15\/15 - loss: \d+\.\d{4} - accuracy: \d\.\d{4} - val_loss: \d+\.\d{4} - val_accuracy: \d\.\d{4}/);
    await readModelsCaughtUp(service);

    const metadata = await api.learn.getKerasMetadata(projectId, 3);
    expect(metadata).toMatchObject({ hasTrainedModel: true, classNames: ['idle', 'wave'], mode: 'classification' });
    expect(metadata.created).toBeInstanceOf(Date);
    const [metrics] = metadata.modelValidationMetrics;
    expect(metrics!.confusionMatrix).toHaveLength(2);
    expect(metrics!.confusionMatrix[0]).toHaveLength(3);
    expect(metrics!.onDevicePerformance[0]).toMatchObject({ mcu: 'cortex-m4f-80mhz', hasPerformance: true });
    expect((await api.learn.getKeras(projectId, 3)).trained).toBe(true);
  });
});
