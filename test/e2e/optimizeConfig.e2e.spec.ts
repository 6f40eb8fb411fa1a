import { describe, expect, it } from 'vitest';
import { classifierBlock, motionInputBlock, sdkProjectForSuite, spectralBlock } from '../support/projectWithFeatures';

// The official SDK, unmodified: OptimizationApi.getConfig before any save (the defaults), updateConfig
// with a search space checked against the project's impulse, read back in the SDK's shape; refusals
// name the problem and change nothing.
describe('the tuner config through the official SDK', () => {
  const project = sdkProjectForSuite('Tuner config through the SDK');
  const device = { name: 'cortex-m4f-80mhz', ram: 131072, rom: 524288 };
  const space = {
    inputBlocks: [{ type: 'time-series', window: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }, { windowSizeMs: 2000, windowIncreaseMs: 500 }] }],
    dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [16, 64], 'do-log': [true] }],
    learnBlocks: [[{ type: 'keras', dimension: [[20, 10], [40]], learningRate: [0.005], trainingCycles: [10, 20] }]],
  };

  it('answers the defaults before any save', async () => {
    const { api, projectId } = project();
    const config = await api.optimization.getConfig(projectId);
    expect(config).toMatchObject({ targetLatency: 100, targetDevice: { name: 'cortex-m4f-80mhz', ram: 131072, rom: 1048576 }, tuningMaxTrials: 30, tuningWorkers: 3, trainingCycles: 30, tuningAlgorithm: 'random', space: [] });
  });

  it('refuses a space while the project has no impulse, and a device without RAM', async () => {
    const { api, projectId } = project();
    await expect(api.optimization.updateConfig(projectId, { targetLatency: 50, targetDevice: device, space: [space] })).rejects.toThrow(/no impulse to check the space against/);
    await expect(api.optimization.updateConfig(projectId, { targetLatency: 50, targetDevice: { name: 'cortex-m4f-80mhz', rom: 524288 } })).rejects.toThrow(/targetDevice.ram: the device's RAM in bytes is required/);
    expect((await api.optimization.getConfig(projectId)).targetLatency).toBe(100);
  });

  it('saves a space valid for the impulse and answers it back in the SDK shape', async () => {
    const { api, projectId } = project();
    await api.impulse.createImpulse(projectId, { name: 'Motion', inputBlocks: [motionInputBlock], dspBlocks: [spectralBlock], learnBlocks: [classifierBlock] } as Parameters<typeof api.impulse.createImpulse>[1]);
    await api.optimization.updateConfig(projectId, { name: 'Small', targetLatency: 20, targetDevice: device, tuningMaxTrials: 8, tuningWorkers: 2, trainingCycles: 20, tuningAlgorithm: 'hyperband', space: [space], enableSEM: true });
    const config = await api.optimization.getConfig(projectId);
    expect(config).toMatchObject({ name: 'Small', targetLatency: 20, targetDevice: device, tuningMaxTrials: 8, tuningWorkers: 2, trainingCycles: 20, tuningAlgorithm: 'hyperband' });
    expect(config.space).toEqual([
      {
        inputBlocks: space.inputBlocks,
        dspBlocks: [{ type: 'spectral-analysis', 'fft-length': ['16', '64'], 'do-log': ['true'] }],
        learnBlocks: [[{ type: 'keras', dimension: [[20, 10], [40]], learningRate: [0.005], trainingCycles: [10, 20], batchSize: [32] }]],
      },
    ]);
  });

  it('refuses a space with a choice the project cannot take, naming it, and keeps the saved config', async () => {
    const { api, projectId } = project();
    const save = (s: object) => api.optimization.updateConfig(projectId, { targetLatency: 20, targetDevice: device, space: [s as typeof space] });
    await expect(save({ ...space, dspBlocks: [{ type: 'spectral-analysis', 'fft-length': [16, 100] }] })).rejects.toThrow(/space\[0\]\.dspBlocks\[0\]\["fft-length"\]\[1\]/);
    await expect(save({ ...space, learnBlocks: [] })).rejects.toThrow(/space\[0\]\.learnBlocks is empty: the space yields no impulse/);
    await expect(save({ ...space, learnBlocks: [[{ type: 'keras-regression' }]] })).rejects.toThrow(/no keras-regression learn block/);
    await expect(api.optimization.updateConfig(projectId, { targetLatency: 20, targetDevice: device, tuningAlgorithm: 'bayesian' })).rejects.toThrow(/"bayesian" is not run by this service/);
    expect((await api.optimization.getConfig(projectId)).name).toBe('Small');
  });
});
