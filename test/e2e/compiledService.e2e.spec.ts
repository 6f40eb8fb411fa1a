import { execFile, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processingBlocks } from '../../domain/dsp/blocks';
import { compiledImpulse, finishedJob, startCompiledService, stopCompiledService, type CompiledService } from '../support/compiledService';
import { exitOf } from '../support/serviceProcess';
import { uploadWaveSamples, waveRows } from '../support/waveSamples';
import { call, loginToken, signup } from '../support/testService';

// The service as the image runs it (Dockerfile): built by service/build.ts, then `node dist/main.js`
// in a folder holding that output and only the production node_modules (`npm ci --omit=dev`), no
// source and no tsx. `--preserve-symlinks` keeps module resolution inside that node_modules (its
// packages are links into the installed one); worker threads inherit the flag.
const run = promisify(execFile);

const impulse = compiledImpulse(2000);
const ROWS = 600; // 6 s at 100 Hz: 9 windows of 2 s, 500 ms apart
const SAMPLES = 6;

describe('the compiled service (node dist/main.js, as in the image)', () => {
  const children: ChildProcess[] = [];
  let service: CompiledService;
  let headers: Record<string, string>;

  beforeAll(async () => {
    service = await startCompiledService('edge-ml-compiled-', children);
  }, 120_000);

  afterAll(async () => {
    await stopCompiledService(service, children);
  });

  it('imports from node_modules only packages a production install holds, and not tsx', () => {
    expect(service.build.packages.length).toBeGreaterThan(0);
    expect(service.build.packages.filter((name) => !service.production.includes(name))).toEqual([]);
    expect(service.production).not.toContain('tsx');
  });

  it('answers /health', async () => {
    const res = await fetch(`${service.apiUrl}/health`);
    expect(res.status).toBe(200);
  });

  it('runs a DSP block and a generate-features job in its worker threads, on compiled code', { timeout: 120_000 }, async () => {
    await call(service, 'POST', '/api-user-create', { body: signup() });
    headers = { 'x-jwt-token': await loginToken(service, 'ada') };
    const project = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: 'Compiled' } });
    expect(project.status, JSON.stringify(project.body)).toBe(200);
    const projectId = Number(project.body.id);
    expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers, body: impulse })).status).toBe(200);

    // dsp/{id}/run: one window through the DSP pool's thread; the same block run here must agree.
    const window = waveRows(ROWS, 3, 0).slice(0, 200).flat();
    const ran = await call(service, 'POST', `/api/${projectId}/dsp/2/run`, { headers, body: { features: window, params: {}, drawGraphs: false } });
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);
    const config = Object.fromEntries(((await call(service, 'GET', `/api/${projectId}/dsp/2`, { headers })).body.config as { items: { param: string; value: string }[] }[]).flatMap((g) => g.items).map((i) => [i.param, i.value]));
    const direct = processingBlocks.get('spectral-analysis')!.run({ values: window, axes: ['accX', 'accY'], frequency: 100 }, config, { implementationVersion: 4, drawGraphs: false });
    expect(ran.body.features).toEqual(Array.from(direct.features).map((v) => expect.closeTo(v, 6)));

    // generate-features: every pool task of the job (features per sample, the explorer, feature importance).
    await uploadWaveSamples(service, { id: projectId, apiKey: String(project.body.apiKey), headers }, SAMPLES, ROWS);
    const requested = await call(service, 'POST', `/api/${projectId}/jobs/generate-features`, { headers, body: { dspId: 2, calculateFeatureImportance: true } });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    const stdout = await finishedJob(service, { id: projectId, headers }, Number(requested.body.id));
    expect(stdout).toMatch(new RegExp(`Processed ${SAMPLES * 9}/${SAMPLES * 9} windows`));
  });

  it('decodes an image sample with sharp (a native addon) in a worker thread for a slice run', async () => {
    const project = await call(service, 'POST', '/api/projects/create', { headers, body: { projectName: 'Compiled vision' } });
    const projectId = Number(project.body.id);
    const vision = {
      name: 'Vision',
      inputBlocks: [{ id: 1, type: 'image', name: 'Image', title: 'Image data', imageWidth: 4, imageHeight: 4, resizeMethod: 'nearest' }],
      dspBlocks: [{ id: 2, type: 'image', name: 'Image', title: 'Image', axes: ['image'], input: 1, implementationVersion: 1 }],
      learnBlocks: [{ id: 3, type: 'keras-transfer-image', name: 'Transfer learning', title: 'Transfer Learning (Images)', dsp: [2] }],
    };
    expect((await call(service, 'POST', `/api/${projectId}/impulse`, { headers, body: vision })).status).toBe(200);
    const form = new FormData();
    form.append('data', new Blob([new Uint8Array(await sharp(Buffer.alloc(5 * 3 * 3, Buffer.from([255, 128, 0])), { raw: { width: 5, height: 3, channels: 3 } }).png().toBuffer())], { type: 'image/png' }), 'solid.png');
    const uploaded = await fetch(`${service.ingestionUrl}/api/training/files`, { method: 'POST', headers: { 'x-api-key': String(project.body.apiKey), 'x-label': 'solid' }, body: form });
    expect(uploaded.status, await uploaded.text()).toBe(200);
    const listed = async () => (await call(service, 'GET', `/api/${projectId}/raw-data?category=training`, { headers })).body.samples as { id: number }[];
    await expect.poll(async () => (await listed()).length, { timeout: 30_000 }).toBe(1);
    const sampleId = (await listed())[0]!.id;
    const res = await call(service, 'POST', `/api/${projectId}/dsp/2/raw-data/${sampleId}/slice/run?sliceStart=0`, { headers, body: { params: {}, store: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // One colour resized is that colour: 16 pixels of R/255, G/255, B/255.
    const pixel = [1, 128 / 255, 0];
    expect(res.body.features).toEqual(Array.from({ length: 16 }, () => pixel).flat().map((v) => expect.closeTo(v, 6)));
  });

  it('stops on SIGTERM, then runs the rebuild and audit subcommands on its data folder', { timeout: 60_000 }, async () => {
    service.child.kill('SIGTERM');
    await exitOf(service.child);
    expect(service.child.exitCode).toBe(0);

    const options = { cwd: service.app, env: service.env() };
    await run(process.execPath, service.node(['rebuild']), options);
    expect((await run(process.execPath, service.node(['rebuild', '--verify']), options)).stdout).toMatch(/identical/);
    expect((await run(process.execPath, service.node(['audit', 'verify']), options)).stdout).toMatch(/^log intact: \d+ events/);
    const exported = path.join(service.folder, 'log.ndjson');
    expect((await run(process.execPath, service.node(['audit', 'export', '--out', exported]), options)).stdout).toMatch(/\d+ events written/);
    expect((await readFile(exported, 'utf8')).trim().split('\n').length).toBeGreaterThan(10);
  });
});
