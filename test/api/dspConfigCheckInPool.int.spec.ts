import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import { signedSample } from '../support/signedSample';
import { adaWithProject, call, startTestService, type TestService } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';

// Saving a DSP config runs the block once on a synthetic window of the input's size
// (up to 100,000 rows). That run belongs in the DSP pool, not on the event loop that serves requests.

/** 16 kHz audio, windows of 6,250 ms: 100,000 rows, the most the check runs on. */
const audioImpulse = {
  name: 'Keywords',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['audio'], windowSizeMs: 6250, windowIncreaseMs: 1000, frequencyHz: 16000 }],
  dspBlocks: [{ id: 2, type: 'mfcc', name: 'MFCC', title: 'Audio (MFCC)', axes: ['audio'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
};
/** The config: 492 frames of 3 s each through a 4,096-point FFT and 512 filters. */
const heavyMfcc = { frame_length: '3.0', frame_stride: '0.0066', fft_length: '4096', num_filters: '512' };

/** 62.5 Hz motion data: `windowSizeMs` decides which wavelet levels the block can run. */
const motionImpulse = (windowSizeMs: number) => ({
  name: 'Motion',
  inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX'], windowSizeMs, windowIncreaseMs: 500, frequencyHz: 62.5 }],
  dspBlocks: [{ id: 2, type: 'spectral-analysis', name: 'Spectral features', title: 'Spectral Analysis', axes: ['accX'], input: 1, implementationVersion: 4 }],
  learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2] }],
});

describe('the DSP config check by running, in the DSP pool', () => {
  let service: TestService;
  let ada: Record<string, string>;
  let audioProject: number;
  let motionProject: number;
  let motionKey: string;
  const post = (projectId: number, path: string, body: unknown) => call(service, 'POST', `/api/${projectId}${path}`, { headers: ada, body });
  const head = async (projectId: number) => (await service.stores.events.readStream(impulsesStream(projectId))).length;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    ({ ada, projectId: motionProject, apiKey: motionKey } = await adaWithProject(service, 'Motion'));
    audioProject = Number((await call(service, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'Audio' } })).body.id);
    expect((await post(audioProject, '/impulse', audioImpulse)).status).toBe(200);
    expect((await post(motionProject, '/impulse', motionImpulse(2000))).status).toBe(200);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('keeps the event loop free while a heavy mfcc config is checked, answering /health meanwhile', async () => {
    // Warm the pool's thread, so that the save's check is the work measured, not the thread's start.
    expect((await post(audioProject, '/dsp/2', { config: { num_cepstral: '13' } })).status).toBe(200);
    /**
     * Saves the heavy config while asking for /health, one request after another, until it answers:
     * the share of the save's time the event loop was busy (performance.eventLoopUtilization), and the
     * /health answers that came while the save was pending.
     */
    const watchedSave = async (numCepstral: string) => {
      const before = performance.eventLoopUtilization();
      let saved = false;
      const save = post(audioProject, '/dsp/2', { config: { ...heavyMfcc, num_cepstral: numCepstral } }).finally(() => (saved = true));
      let answered = 0;
      while (!saved) {
        const health = await fetch(`${service.apiUrl}/health`);
        expect(health.status).toBe(200);
        await health.arrayBuffer();
        if (!saved) answered++;
        await sleep(10);
      }
      const res = await save;
      const busy = performance.eventLoopUtilization(before).utilization;
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { busy, answered };
    };
    // Three saves, each a change and each checked. On the event loop the check keeps the loop busy for
    // nearly all of every save (0.99 here), whatever the machine's load, and no /health is answered
    // while it runs; in the pool the loop waits for it, idle, between the /health requests (0.3 to 0.6
    // here). Best of three, for a loaded machine that takes the core from this process a while.
    const saves = [await watchedSave('12'), await watchedSave('13'), await watchedSave('12')];
    const described = saves.map((s) => `${s.busy.toFixed(2)} (${s.answered} /health answers)`).join(', ');
    expect(Math.min(...saves.map((s) => s.busy)), `the event loop's busy share of each save: ${described}`).toBeLessThan(0.8);
    expect(Math.max(...saves.map((s) => s.answered)), described).toBeGreaterThan(1);
    const items = ((await call(service, 'GET', `/api/${audioProject}/dsp/2`, { headers: ada })).body.config as { items: { param: string; value: string }[] }[]).flatMap((g) => g.items);
    expect(Object.fromEntries(items.filter((i) => i.param in heavyMfcc).map((i) => [i.param, i.value]))).toEqual(heavyMfcc);
  }, 120_000);

  it('answers as before: a config the block refuses when run is a 400 naming the parameter and saves nothing; a good one saves', async () => {
    const before = await head(motionProject);
    // 2 s at 62.5 Hz is 125 rows: a level-6 wavelet needs 32.8 s of them.
    const res = await post(motionProject, '/dsp/2', { config: { 'analysis-type': 'Wavelet', 'wavelet-level': '6' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false });
    expect(String(res.body.error)).toBe('Invalid DSP config for block 2 (spectral-analysis): "wavelet-level": wavelet decomposition level is too high, please increase window size to at least 32768 ms, or reduce level');
    // The cheap checks still answer before any run.
    const cheap = await post(motionProject, '/dsp/2', { config: { 'fft-length': '100' } });
    expect(cheap.status).toBe(400);
    expect(String(cheap.body.error)).toMatch(/^Invalid DSP config for block 2 \(spectral-analysis\): "fft-length": must be a power of 2/);
    expect(await head(motionProject)).toBe(before);
    expect((await post(motionProject, '/dsp/2', { config: { 'analysis-type': 'Wavelet', 'wavelet-level': '1' } })).status).toBe(200);
    expect(await head(motionProject)).toBe(before + 1);
  });

  it('refuses generate-features for a saved config that the changed impulse makes the block refuse, requesting no job', async () => {
    const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': motionKey, 'content-type': 'application/json', 'x-file-name': 'wave.json', 'x-label': 'wave' },
      body: signedSample('none', Array.from({ length: 4000 }, (_, i) => [Math.sin(i / 5), Math.cos(i / 7)]), { alg: 'none', intervalMs: 16 }),
    });
    expect(res.status, await res.text()).toBe(200);
    await readModelsCaughtUp(service);
    // Level 4 runs on 8.2 s windows and more; the impulse's window then shrinks to 2 s, keeping the config.
    expect((await post(motionProject, '/impulse', motionImpulse(10_000))).status).toBe(200);
    expect((await post(motionProject, '/dsp/2', { config: { 'analysis-type': 'Wavelet', 'wavelet-level': '4' } })).status).toBe(200);
    expect((await post(motionProject, '/impulse', motionImpulse(2000))).status).toBe(200);
    const jobs = async () => Number((await call(service, 'GET', `/api/${motionProject}/jobs/all?limit=1000`, { headers: ada })).body.totalJobCount);
    const before = await jobs();
    const refused = await post(motionProject, '/jobs/generate-features', { dspId: 2 });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(String(refused.body.error)).toMatch(/^"wavelet-level": wavelet decomposition level is too high, please increase window size to at least 8192 ms, or reduce level$/);
    expect(await jobs()).toBe(before);
  });
});
