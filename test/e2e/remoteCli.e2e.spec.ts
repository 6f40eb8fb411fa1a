// The official device CLI (`edge-impulse-linux`, unmodified) against the remote-management server:
// it connects with an API key and a fake camera, is listed connected with its camera, takes an image
// sample when the SDK's startSampling asks for one, and is listed disconnected once killed. Its ports
// are fixed; a preload redirects them to the test service's.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../domain/device/deviceEvents';
import { JPEG } from '../support/images';
import { readModelsCaughtUp } from '../support/readModels';
import { adaWithProject, call, startTestService, type TestService } from '../support/testService';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../../node_modules/edge-impulse-linux/build/cli/linux/linux.js');
const PRELOAD = path.resolve(here, '../support/portRedirect.cjs');

describe('the official edge-impulse-linux CLI on the remote-management server', () => {
  let service: TestService;
  let home: string;
  let cli: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    home = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-cli-home-'));
  });
  afterAll(async () => {
    cli?.kill('SIGKILL');
    await service?.destroy();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('connects, is listed with its camera, samples on demand, and is listed disconnected once killed', async () => {
    const { ada, projectId, apiKey } = await adaWithProject(service, 'CLI devices');
    const camera = path.join(home, 'frame.jpg');
    await writeFile(camera, JPEG);
    const port = (url: string) => new URL(url.replace(/^ws:/, 'http:')).port;
    cli = spawn(process.execPath, [CLI, '--api-key', apiKey, '--disable-microphone', '--fake-camera', camera, '--silent', '--dont-prompt-for-device-name'], {
      env: {
        ...process.env,
        HOME: home,
        EI_HOST: 'localhost',
        NODE_OPTIONS: `--require ${PRELOAD}`,
        PORT_MAP: `4800:${port(service.apiUrl)},4802:${port(service.remoteMgmtUrl!)},4810:${port(service.ingestionUrl!)}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cli.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    cli.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const devices = async () => (await call(service, 'GET', `/api/${projectId}/devices`, { headers: ada })).body.devices as Record<string, unknown>[];

    let listed: Record<string, unknown> | undefined;
    for (let i = 0; i < 300 && !listed; i++) {
      await sleep(100);
      listed = (await devices()).find((d) => d.remote_mgmt_connected === true);
    }
    expect(listed, `the CLI said:\n${output}`).toMatchObject({
      deviceType: 'EDGE_IMPULSE_LINUX',
      remote_mgmt_connected: true,
      remote_mgmt_host: '127.0.0.1',
      remoteMgmtMode: 'ingestion',
      supportsSnapshotStreaming: true,
      sensors: [{ name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] }],
    });
    // After its hello, the CLI registers and names the device through the API and reads the project.
    for (let i = 0; i < 100 && !/is now connected to project/.test(output); i++) await sleep(100);
    expect(output).toMatch(/is now connected to project "CLI devices"/);
    const deviceId = String(listed!.deviceId);

    // The official SDK asks for a sample; the device takes a frame and uploads it to the training set.
    const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.authenticate({ method: 'apiKey', apiKey });
    const started = await api.devices.startSampling(projectId, deviceId, { label: 'red-square', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)' });
    expect(started).toMatchObject({ success: true, id: expect.any(Number) });
    let sample: Awaited<ReturnType<typeof api.rawData.listSamples>>['samples'][number] | undefined;
    for (let i = 0; i < 300 && !sample; i++) {
      await sleep(100);
      sample = (await api.rawData.listSamples(projectId, { category: 'training' })).samples.find((s) => s.label === 'red-square');
    }
    expect(sample, `the CLI said:\n${output}`).toMatchObject({ label: 'red-square', chartType: 'image', deviceType: 'EDGE_IMPULSE_CLI' });
    expect((await api.rawData.listSamples(projectId, { category: 'testing' })).samples).toHaveLength(0);
    // The device's progress is in the log, ending finished, for the request the call answered.
    let progress: { requestId: number; stage: string }[] = [];
    for (let i = 0; i < 100 && !progress.some((p) => p.stage === 'finished'); i++) {
      await sleep(50);
      progress = (await service.stores.events.readStream(deviceStream(projectId, deviceId))).filter((e) => e.type === 'DeviceSamplingProgressed').map((e) => e.data as { requestId: number; stage: string });
    }
    // The library says `started` at once and `{sample: true}` a tick later, so those two come in either order.
    expect(progress.map((p) => p.stage).sort()).toEqual(['accepted', 'finished', 'started', 'uploading']);
    expect(progress.at(-1)!.stage).toBe('finished');
    expect(new Set(progress.map((p) => p.requestId))).toEqual(new Set([started.id]));

    cli.kill('SIGKILL');
    let events: string[] = [];
    for (let i = 0; i < 100 && !events.includes('DeviceDisconnected'); i++) {
      await sleep(50);
      events = (await service.stores.events.readStream(deviceStream(projectId, deviceId))).map((e) => e.type);
    }
    await readModelsCaughtUp(service);
    expect((await devices()).find((d) => d.deviceId === deviceId)).toMatchObject({ remote_mgmt_connected: false, remoteMgmtMode: 'disconnected' });
    // Its createDevice (ifNotExists) after the hello finds the device the hello made: no event.
    expect(events).toEqual(['DeviceConnected', 'DeviceSamplingRequested', ...progress.map(() => 'DeviceSamplingProgressed'), 'DeviceDisconnected']);
  });
});
