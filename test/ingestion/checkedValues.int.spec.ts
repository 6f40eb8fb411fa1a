import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedSample } from '../support/signedSample';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

/**
 * Values no projection could apply, or that hide what a person reads, sent as devices and clients
 * send them: each is answered 400 with a text naming the field or header, and nothing is appended
 * to the log. (Storage does not matter here: the embedded setup alone.)
 */
describe('values the deciders refuse, over HTTP', () => {
  let service: TestService;
  let token: string;
  let projectId: number;
  let apiKey: string;
  let hmacKey: string;

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    token = (await registerUser(service)).token;
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Bounds' } });
    projectId = Number(project.body.id);
    apiKey = String(project.body.apiKey);
    hmacKey = String((await call(service, 'GET', `/api/${projectId}/devkeys`, { headers: { 'x-jwt-token': token } })).body.hmacKey);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  const head = () => service.stores.events.headPosition();
  const data = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': 'idle.01.json', ...headers },
      body,
    });
  const files = (parts: { body: string; type: string; name: string }[], headers: Record<string, string> = {}) => {
    const form = new FormData();
    for (const part of parts) form.append('data', new Blob([part.body], { type: part.type }), part.name);
    return fetch(`${service.ingestionUrl}/api/training/files`, { method: 'POST', headers: { 'x-api-key': apiKey, ...headers }, body: form });
  };
  const sample = () => signedSample(hmacKey, [[1, 2], [3, 4]]);

  /** Sends, expects a 400 in text/plain whose text matches `names`, and that the log did not grow. */
  async function refusedWithoutAppend(send: () => Promise<Response>, names: RegExp): Promise<void> {
    const before = await head();
    const res = await send();
    const text = await res.text();
    expect(res.status, text).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(text).toMatch(names);
    expect(await head()).toBe(before);
  }

  it('accepts the same upload when its values are in range (so the refusals below are about the values)', async () => {
    const before = await head();
    const res = await data(sample(), { 'x-label': 'idle' });
    expect(res.status, await res.text()).toBe(200);
    expect(await head()).not.toBe(before);
  });

  it('refuses the acquisition file that once broke the samples read model (an interval of 1e308, whose length overflows to Infinity)', async () => {
    const poison = '{"protected":{"ver":"v1","alg":"none"},"signature":"0","payload":{"interval_ms":1e308,"sensors":[{"name":"x","units":"u"}],"values":[[1],[2]]}}';
    await refusedWithoutAppend(() => data(poison), /interval/i);
  });

  it('refuses a device name of 3 MB in the file, naming payload.device_name', async () => {
    const body = JSON.parse(sample()) as { payload: { device_name: string } };
    body.payload.device_name = 'd'.repeat(3_000_000);
    await refusedWithoutAppend(() => data(JSON.stringify(body)), /payload\.device_name.*at most 256/);
  });

  it('refuses a control character in x-label, naming the header', async () => {
    await refusedWithoutAppend(() => data(sample(), { 'x-label': encodeURIComponent('idle\u0007') }), /x-label contains a control character \(U\+0007\)/);
  });

  it('refuses a direction override in x-label, naming the header', async () => {
    await refusedWithoutAppend(() => data(sample(), { 'x-label': encodeURIComponent('gpj.\u202Eexe') }), /x-label contains an invisible formatting character \(U\+202E\)/);
  });

  it('refuses a direction override in x-file-name, naming the file name', async () => {
    await refusedWithoutAppend(() => data(sample(), { 'x-file-name': encodeURIComponent('idle\u202Enosj.json') }), /file name contains an invisible formatting character \(U\+202E\)/);
  });

  it('refuses a control character in an x-metadata value, and in x-device-type', async () => {
    await refusedWithoutAppend(() => data(sample(), { 'x-metadata': JSON.stringify({ site: 'lab\u0001' }) }), /x-metadata: the value of "site" contains a control character/);
    await refusedWithoutAppend(() => data(sample(), { 'x-device-type': 'LINUX\u0085' }), /x-device-type contains a control character \(U\+0085\)/);
    await refusedWithoutAppend(() => data(sample(), { 'x-metadata': JSON.stringify({ $set: 'x' }) }), /x-metadata: the key "\$set" must not start with "\$"/);
  });

  it('refuses a direction override in the name of a multipart part, naming the file name', async () => {
    // Spelt as RFC 5987 `filename*`, which multipart parsers decode as UTF-8 (FormData sends raw bytes,
    // which the receiver reads as latin1).
    const boundary = 'checkedValuesBoundary';
    const body = [
      `--${boundary}`,
      `Content-Disposition: form-data; name="data"; filename*=UTF-8''${encodeURIComponent('idle\u2066.json')}`,
      'Content-Type: application/json',
      '',
      sample(),
      `--${boundary}--`,
      '',
    ].join('\r\n');
    await refusedWithoutAppend(
      () =>
        fetch(`${service.ingestionUrl}/api/training/files`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': `multipart/form-data; boundary=${boundary}` },
          body,
        }),
      /file name contains an invisible formatting character \(U\+2066\)/,
    );
  });

  it('refuses info.labels whose label or bounding box label holds control or bidi characters, naming where', async () => {
    const info = (label: unknown) => JSON.stringify({ version: 1, files: [{ path: 'idle.02.json', category: 'training', label }] });
    await refusedWithoutAppend(
      () =>
        files([
          { body: sample(), type: 'application/json', name: 'idle.02.json' },
          { body: info({ type: 'label', label: 'idle\u001b[2J' }), type: 'application/json', name: 'info.labels' },
        ]),
      /files\[0\]\.label\.label contains a control character \(U\+001B\)/,
    );
    const boxes = JSON.stringify({ version: 1, type: 'bounding-box-labels', boundingBoxes: { 'idle.02.json': [{ label: 'c\u202Eat', x: 1, y: 1, width: 2, height: 2 }] } });
    await refusedWithoutAppend(
      () =>
        files([
          { body: sample(), type: 'application/json', name: 'idle.02.json' },
          { body: boxes, type: 'application/json', name: 'bounding_boxes.labels' },
        ]),
      /\[0\]\.label contains an invisible formatting character \(U\+202E\)/,
    );
  });

  it('refuses a structured label with a control character, naming where', async () => {
    const structured = JSON.stringify({ version: 1, type: 'structured-labels', structuredLabels: { 'idle.02.json': [{ label: 'idle\u0000', startIndex: 0, endIndex: 1 }] } });
    await refusedWithoutAppend(
      () =>
        files([
          { body: sample(), type: 'application/json', name: 'idle.02.json' },
          { body: structured, type: 'application/json', name: 'structured_labels.labels' },
        ]),
      /\[0\]\.label contains a control character \(U\+0000\)/,
    );
  });

  it('refuses a device id with a direction override or over its length on device registration, naming deviceId', async () => {
    const create = (deviceId: string) =>
      call(service, 'POST', `/api/${projectId}/devices/create`, { headers: { 'x-jwt-token': token }, body: { deviceId, deviceType: 'LINUX', ifNotExists: false } });
    for (const deviceId of ['dev\u202Eice', 'd'.repeat(100_000)]) {
      const before = await head();
      const res = await create(deviceId);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(String(res.body.error)).toMatch(/deviceId/);
      expect(await head()).toBe(before);
    }
  });

  it('refuses a device name of 3 MB on rename with 413 (over the 1 MB body limit) and a bidi one with 400, appending nothing', async () => {
    const created = await call(service, 'POST', `/api/${projectId}/devices/create`, { headers: { 'x-jwt-token': token }, body: { deviceId: 'kitchen', deviceType: 'LINUX', ifNotExists: true } });
    expect(created.status).toBe(200);
    const rename = (name: string) => call(service, 'POST', `/api/${projectId}/devices/kitchen/rename`, { headers: { 'x-jwt-token': token }, body: { name } });
    const before = await head();
    expect((await rename('n'.repeat(3_000_000))).status).toBe(413);
    const bidi = await rename('Kitchen\u2067');
    expect(bidi.status).toBe(400);
    expect(String(bidi.body.error)).toMatch(/name/);
    expect(await head()).toBe(before);
  });
});
