import { EdgeImpulseApi } from 'edge-impulse-api';
import { DataForwarder } from 'edge-impulse-linux';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sdkProject } from '../support/projectWithFeatures';
import type { TestService } from '../support/testService';

// The official device library sends to http://localhost:4810 when told the host is `localhost`,
// so this service listens there.
describe('the official device tools against the ingestion API', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;
  let apiKey: string;
  let hmacKey: string;

  beforeAll(async () => {
    ({ service, api, projectId, apiKey } = await sdkProject('Devices', { env: { INGESTION_PORT: '4810' } }));
    hmacKey = (await api.projects.listDevkeys(projectId)).hmacKey!;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('stores what DataForwarder signs and sends, with a valid signature, seen by the SDK', async () => {
    const forwarder = new DataForwarder({
      deviceId: 'linux-device-1',
      deviceType: 'RASPBERRY_PI',
      sensors: [
        { name: 'accX', units: 'm/s2' },
        { name: 'accY', units: 'm/s2' },
        { name: 'accZ', units: 'm/s2' },
      ],
      intervalMs: 16,
      hmacKey,
      apiKey,
      host: 'localhost',
    });
    for (let i = 0; i < 125; i++) forwarder.addData([Math.sin(i / 10), Math.cos(i / 10), 9.81]);
    // Both uploads below are signed in the same second (see the duplicate at the end).
    const clock = vi.spyOn(Date, 'now').mockReturnValue(Date.now());
    const fileName = await forwarder.upload({ filename: 'wave.01', label: 'wave', category: 'training' });
    expect(fileName).toBe('wave.01');

    const { samples, totalCount } = await api.rawData.listSamples(projectId, { category: 'training' });
    expect(totalCount).toBe(1);
    expect(samples[0]).toMatchObject({ filename: 'wave.01', label: 'wave', signatureValidate: true, intervalMs: 16, valuesCount: 125, deviceName: 'linux-device-1', deviceType: 'RASPBERRY_PI' });
    const info = await api.projects.getProjectInfo(projectId);
    expect(info.dataSummaryPerCategory.training).toMatchObject({ dataCount: 1, totalLengthMs: 2000, labels: ['wave'] });
    expect(info.devices.map((d) => d.deviceId)).toEqual(['linux-device-1']);
    // DataForwarder refuses duplicates by default: the same file again is refused. The file holds
    // its signing time in seconds (`iat`), so it is the same file only within that second.
    await expect(forwarder.upload({ filename: 'wave.02', label: 'wave', category: 'training' })).rejects.toMatch(/same content/);
    clock.mockRestore();
  });

  it('stores a multipart upload built exactly as the CLI builds it, with info.labels', async () => {
    const form = new FormData();
    const csv = 'timestamp,accX,accY\n0,0.1,0.2\n20,0.3,0.4\n40,0.5,0.6\n';
    form.append('data', new Blob([csv], { type: 'text/csv' }), 'idle.01.csv');
    form.append('data', new Blob([csv.replace('0.1', '0.9')], { type: 'text/csv' }), 'other.csv');
    const infoLabels = {
      version: 1,
      files: [
        { path: 'other.csv', name: 'other', category: 'testing', label: { type: 'label', label: 'noise' }, metadata: { site: 'lab' } },
      ],
    };
    form.append('data', new Blob([JSON.stringify(infoLabels)], { type: 'application/octet-stream' }), 'info.labels');
    const res = await fetch('http://localhost:4810/api/training/files', {
      method: 'POST',
      headers: {
        'x-api-key': apiKey,
        'x-upload-source': 'EDGE_IMPULSE_CLI_UPLOADER',
        'x-label': '',
        'x-no-label': '1',
        'x-disallow-duplicates': '1',
        'x-metadata': '{}',
        'x-add-date-id': '1',
        'x-device-type': 'EDGE_IMPULSE_CLI',
        Connection: 'keep-alive',
      },
      body: form,
    });
    expect(res.status).toBe(200);
    const answer = JSON.parse(await res.text()) as { success: boolean; files: { success: boolean; fileName: string }[] };
    expect(answer.success).toBe(true);
    expect(answer.files.map((f) => f.success)).toEqual([true, true]);
    const training = await api.rawData.listSamples(projectId, { category: 'training', filename: 'idle' });
    expect(training.samples[0]).toMatchObject({ label: '', deviceType: 'EDGE_IMPULSE_CLI', intervalMs: 20, valuesCount: 3 });
    const testing = await api.rawData.listSamples(projectId, { category: 'testing' });
    expect(testing.samples[0]).toMatchObject({ label: 'noise', metadata: { site: 'lab' } });
  });

  it('answers over HTTPS on the TLS port with the self-signed certificate', async () => {
    const https = await import('node:https');
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request(`${service.ingestionTlsUrl}/api/training/data`, { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json', 'x-file-name': 'x.json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(401);
  });
});
