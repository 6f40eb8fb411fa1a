import { afterAll, beforeAll, expect, it } from 'vitest';
import { JPEG, png } from '../support/images';
import { avi, mp4, wav } from '../support/mediaFiles';
import { signedSample } from '../support/signedSample';
import { call, describeOn, setups, startTestService, type TestService, registerUser } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';

const rows = (n: number) => Array.from({ length: n }, (_, i) => [i, -i]);

for (const setup of setups) {
  describeOn(setup, 'the ingestion API', () => {
    let service: TestService;
    let token: string;
    let projectId: number;
    let apiKey: string;
    let hmacKey: string;

    // Ingestion answers on durability: what follows reads the read models, so it waits for them.
    const ingest = async (pathname: string, body: string | Buffer | FormData, headers: Record<string, string> = {}) => {
      const res = await fetch(`${service.ingestionUrl}${pathname}`, { method: 'POST', headers: { 'x-api-key': apiKey, ...headers }, body });
      await readModelsCaughtUp(service);
      return res;
    };
    const data = (fileName: string, body: string, headers: Record<string, string> = {}) =>
      ingest('/api/training/data', body, { 'content-type': 'application/json', 'x-file-name': encodeURIComponent(fileName), ...headers });
    const samples = async (query = 'category=training') =>
      (await call(service, 'GET', `/api/${projectId}/raw-data?${query}&limit=100`, { headers: { 'x-jwt-token': token } })).body as { samples: Record<string, unknown>[]; totalCount: number };
    const info = async () => (await call(service, 'GET', `/api/${projectId}`, { headers: { 'x-jwt-token': token } })).body;
    const head = () => service.stores.events.headPosition();

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      token = (await registerUser(service)).token;
      const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Ingest' } });
      projectId = Number(project.body.id);
      apiKey = String(project.body.apiKey);
      hmacKey = String((await call(service, 'GET', `/api/${projectId}/devkeys`, { headers: { 'x-jwt-token': token } })).body.hmacKey);
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('stores a signed JSON sample, answers its file name, and verifies the signature', async () => {
      const res = await data('wave.01.json', signedSample(hmacKey, rows(100)));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe('wave.01.json');
      const list = await samples();
      expect(list.totalCount).toBe(1);
      expect(list.samples[0]).toMatchObject({
        filename: 'wave.01.json',
        label: 'wave',
        category: 'training',
        signatureValidate: true,
        signatureMethod: 'HS256',
        intervalMs: 10,
        frequency: 100,
        valuesCount: 100,
        totalLengthMs: 1000,
        deviceName: 'ac:87:a3:0a:2d:1b',
        deviceType: 'LINUX_TEST',
        sensors: [
          { index: 0, name: 'accX', units: 'm/s2' },
          { index: 1, name: 'accY', units: 'm/s2' },
        ],
        sha256Hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      const sample = await call(service, 'GET', `/api/${projectId}/raw-data/${String(list.samples[0]!.id)}`, { headers: { 'x-jwt-token': token } });
      expect((sample.body.payload as { values: number[][] }).values.slice(0, 2)).toEqual([[0, 0], [1, -1]]);
    });

    it('follows every ingest in the project information: summaries, new training data, devices', async () => {
      const body = await info();
      expect(body.dataSummaryPerCategory).toMatchObject({ training: { dataCount: 1, totalLengthMs: 1000, labels: ['wave'], totalLabels: 1 } });
      expect(body.dataSummary).toMatchObject({ dataCount: 1, labels: ['wave'] });
      expect(body.hasNewTrainingData).toBe(true);
      expect(body.devices).toEqual([expect.objectContaining({ deviceId: 'ac:87:a3:0a:2d:1b', deviceType: 'LINUX_TEST', lastSeen: expect.any(String), remote_mgmt_connected: false, remoteMgmtMode: 'disconnected' })]);
    });

    it('stores a sample with a wrong signature marked invalid, and alg none unsigned', async () => {
      expect((await data('bad.json', signedSample('not-the-key', rows(5)))).status).toBe(200);
      expect((await data('unsigned.json', signedSample('', rows(5), { alg: 'none' }))).status).toBe(200);
      const invalid = await samples('category=training&signatureValidity=invalid');
      expect(invalid.samples.map((s) => s.filename).sort()).toEqual(['bad.json', 'unsigned.json']);
      expect((await samples('category=training&signatureValidity=valid')).samples.map((s) => s.filename)).toEqual(['wave.01.json']);
    });

    it('takes the label from x-label (URI-decoded), none with x-no-label, and metadata from x-metadata', async () => {
      expect((await data('x.json', signedSample(hmacKey, rows(3)), { 'x-label': encodeURIComponent('left turn/é') })).status).toBe(200);
      expect((await data('named.json', signedSample(hmacKey, rows(3)), { 'x-no-label': '1', 'x-label': '' })).status).toBe(200);
      expect((await data('meta.json', signedSample(hmacKey, rows(3)), { 'x-metadata': JSON.stringify({ site: 'lab', run: 3 }) })).status).toBe(200);
      const list = (await samples()).samples;
      expect(list.find((s) => s.filename === 'x.json')!.label).toBe('left turn/é');
      expect(list.find((s) => s.filename === 'named.json')!.label).toBe('');
      expect(list.find((s) => s.filename === 'meta.json')!.metadata).toEqual({ site: 'lab', run: '3' });
    });

    it('appends a unique id to the stored name with x-add-date-id', async () => {
      const res = await data('dated.json', signedSample(hmacKey, rows(3)), { 'x-add-date-id': '1' });
      expect(await res.text()).toMatch(/^dated\.[0-9a-z]+\.json$/);
    });

    it('refuses a duplicate with x-disallow-duplicates, until the first copy is deleted', async () => {
      const body = signedSample(hmacKey, rows(7), { deviceName: 'dup-device' });
      expect((await data('dup.json', body, { 'x-disallow-duplicates': '1' })).status).toBe(200);
      const again = await data('dup2.json', body, { 'x-disallow-duplicates': '1' });
      expect(again.status).toBe(400);
      expect(await again.text()).toMatch(/same content/);
      const first = (await samples('category=training&filename=dup.json')).samples[0]!;
      expect((await call(service, 'DELETE', `/api/${projectId}/raw-data/${String(first.id)}`, { headers: { 'x-jwt-token': token } })).status).toBe(200);
      expect((await data('dup3.json', body, { 'x-disallow-duplicates': '1' })).status).toBe(200);
    });

    it('stores one of two identical files sent at once with x-disallow-duplicates, in one request or two', async () => {
      const body = signedSample(hmacKey, rows(9), { deviceName: 'twins' });
      const both = await Promise.all([data('twin.a.json', body, { 'x-disallow-duplicates': '1' }), data('twin.b.json', body, { 'x-disallow-duplicates': '1' })]);
      expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
      const form = new FormData();
      const other = signedSample(hmacKey, rows(11), { deviceName: 'twins' });
      form.append('data', new Blob([other], { type: 'application/json' }), 'pair.a.json');
      form.append('data', new Blob([other], { type: 'application/json' }), 'pair.b.json');
      const res = await ingest('/api/training/files', form, { 'x-disallow-duplicates': '1' });
      const answer = JSON.parse(await res.text()) as { files: { success: boolean }[] };
      expect(answer.files.map((f) => f.success)).toEqual([true, false]);
    });

    it('answers 401 without or with a bad API key, and 421 without a required header, storing nothing', async () => {
      const before = await head();
      const body = signedSample(hmacKey, rows(3));
      const noKey = await fetch(`${service.ingestionUrl}/api/training/data`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-file-name': 'a.json' }, body });
      expect(noKey.status).toBe(401);
      expect(await noKey.text()).toMatch(/x-api-key/);
      expect((await data('a.json', body, { 'x-api-key': 'ei_' + 'f'.repeat(64) })).status).toBe(401);
      const noName = await ingest('/api/training/data', body, { 'content-type': 'application/json' });
      expect(noName.status).toBe(421);
      expect(await noName.text()).toMatch(/X-File-Name/);
      const noType = await ingest('/api/training/data', Buffer.from(body), { 'x-file-name': 'a.json' });
      expect(noType.status).toBe(421);
      expect(await noType.text()).toMatch(/Content-Type/);
      expect(await head()).toBe(before);
    });

    it('answers 400 naming the problem for malformed or invalid content, storing nothing', async () => {
      const before = await head();
      const cases: [string, string, RegExp][] = [
        ['broken.json', '{"protected": {"ver": "v1", "alg": "none"}, "payload": ', /JSON/i],
        ['rows.json', signedSample(hmacKey, [[1, 2], [3]]), /row/i],
        ['nan.json', signedSample(hmacKey, rows(2)).replace('[1,-1]', '[1,"x"]'), /number|numeric/i],
        ['../escape.json', signedSample(hmacKey, rows(2)), /name/i],
      ];
      for (const [name, body, message] of cases) {
        const res = await data(name, body);
        expect(res.status, name).toBe(400);
        expect(await res.text(), name).toMatch(message);
      }
      expect(await head()).toBe(before);
    });

    it('answers multipart /files with the JSON the CLI reads: each file on its own', async () => {
      const form = new FormData();
      form.append('data', new Blob([signedSample(hmacKey, rows(4))], { type: 'application/json' }), 'idle.01.json');
      form.append('data', new Blob(['timestamp,accX,accY\n0,1,2\n10,3,4\n20,5,6\n'], { type: 'text/csv' }), 'idle.02.csv');
      const ok = await ingest('/api/training/files', form, { 'x-upload-source': 'EDGE_IMPULSE_CLI_UPLOADER' });
      expect(ok.status).toBe(200);
      expect(JSON.parse(await ok.text())).toEqual({ success: true, files: [{ success: true, fileName: 'idle.01.json' }, { success: true, fileName: 'idle.02.csv' }] });

      const mixed = new FormData();
      mixed.append('data', new Blob([signedSample(hmacKey, rows(4))], { type: 'application/json' }), 'good.json');
      mixed.append('data', new Blob([''], { type: 'application/json' }), 'empty.json');
      const res = await ingest('/api/testing/files', mixed);
      expect(res.status).toBe(400);
      const answer = JSON.parse(await res.text()) as { success: boolean; files: { success: boolean; fileName: string; error?: string }[] };
      expect(answer.success).toBe(false);
      expect(answer.files).toEqual([
        { success: true, fileName: 'good.json' },
        { success: false, fileName: 'empty.json', error: expect.stringMatching(/empty/) },
      ]);
      expect((await samples('category=testing')).samples.map((s) => s.filename)).toEqual(['good.json']);
    });

    it('stores every file type with what its content says, and shows WAV values in the raw view', async () => {
      const form = new FormData();
      form.append('data', new Blob([wav({ sampleRate: 16000, frames: Array.from({ length: 1600 }, (_, i) => [i % 100]) })], { type: 'audio/wav' }), 'yes.01.wav');
      form.append('data', new Blob([png([1, 2, 3, 255], 4, 3)], { type: 'image/png' }), 'cat.01.png');
      form.append('data', new Blob([JPEG], { type: 'image/jpeg' }), 'dog.01.jpg');
      form.append('data', new Blob([mp4({ duration: 2500 })], { type: 'video/mp4' }), 'clip.01.mp4');
      form.append('data', new Blob([avi({ microsPerFrame: 40000, totalFrames: 50 })], { type: 'video/avi' }), 'clip.02.avi');
      form.append('data', new Blob([png([1, 2, 3, 255])], { type: 'audio/wav' }), 'liar.wav');
      const res = await ingest('/api/training/files', form);
      const answer = JSON.parse(await res.text()) as { files: { success: boolean; fileName: string; error?: string }[] };
      expect(res.status).toBe(400);
      expect(answer.files.map((f) => f.success)).toEqual([true, true, true, true, true, false]);
      expect(answer.files[5]!.error).toMatch(/declared audio\/wav/);
      const list = (await samples('category=training')).samples;
      const byName = (name: string) => list.find((s) => s.filename === name)!;
      expect(byName('yes.01.wav')).toMatchObject({ label: 'yes', frequency: 16000, valuesCount: 1600, totalLengthMs: 100, chartType: 'chart' });
      expect(byName('cat.01.png')).toMatchObject({ label: 'cat', chartType: 'image', imageDimensions: { width: 4, height: 3 } });
      expect(byName('dog.01.jpg')).toMatchObject({ chartType: 'image', imageDimensions: expect.any(Object) });
      expect(byName('clip.01.mp4')).toMatchObject({ chartType: 'video', totalLengthMs: 2500 });
      expect(byName('clip.02.avi')).toMatchObject({ chartType: 'video', totalLengthMs: 2000 });
      const audio = await call(service, 'GET', `/api/${projectId}/raw-data/${String(byName('yes.01.wav').id)}?limitPayloadValues=3`, { headers: { 'x-jwt-token': token } });
      expect((audio.body.payload as { values: number[][] }).values).toEqual([[0], [1], [2]]);
    });

    it('keeps a sample\'s file when a profile photo with the same bytes is removed', async () => {
      const bytes = png([1, 2, 3, 255], 4, 3);
      const form = new FormData();
      form.append('photo', new Blob([bytes], { type: 'image/png' }), 'me.png');
      const upload = await fetch(`${service.apiUrl}/v1/api/user/photo`, { method: 'POST', headers: { 'x-jwt-token': token }, body: form });
      expect(upload.status).toBe(200);
      expect((await call(service, 'DELETE', '/api/user/photo', { headers: { 'x-jwt-token': token } })).status).toBe(200);
      const sample = (await samples('category=training&filename=cat.01')).samples[0]!;
      expect(await service.stores.blobs.stat(String(sample.sha256Hash))).toBeDefined();
    });

    it('takes CBOR acquisition files on /data', async () => {
      const cbor = await import('cbor');
      const body = cbor.encode({ protected: { ver: 'v1', alg: 'none' }, signature: '0'.repeat(64), payload: { device_type: 'MCU', interval_ms: 5, sensors: [{ name: 'x', units: 'g' }], values: [[1], [2], [3]] } });
      const res = await ingest('/api/training/data', body, { 'content-type': 'application/cbor', 'x-file-name': 'tiny.cbor' });
      expect(res.status).toBe(200);
      const sample = (await samples('category=training&filename=tiny')).samples[0]!;
      expect(sample).toMatchObject({ valuesCount: 3, intervalMs: 5, signatureValidate: false });
      const full = await call(service, 'GET', `/api/${projectId}/raw-data/${String(sample.id)}`, { headers: { 'x-jwt-token': token } });
      expect((full.body.payload as { values: number[][] }).values).toEqual([[1], [2], [3]]);
    });

    it('refuses a file over 100 MB on its own: the other files of the request are stored', async () => {
      const form = new FormData();
      form.append('data', new Blob([Buffer.alloc(100_000_001, 0x20)], { type: 'text/csv' }), 'huge.csv');
      form.append('data', new Blob([signedSample(hmacKey, rows(6), { deviceName: 'beside-huge' })], { type: 'application/json' }), 'beside.json');
      const res = await ingest('/api/training/files', form);
      expect(res.status).toBe(413);
      const answer = JSON.parse(await res.text()) as { files: { success: boolean; fileName: string; error?: string }[] };
      expect(answer.files).toEqual([
        { success: false, fileName: 'huge.csv', error: expect.stringMatching(/larger than 100 MB/) },
        { success: true, fileName: 'beside.json' },
      ]);
    }, 60_000);

    it('leaves nothing behind when an upload is cut off in the middle', async () => {
      const before = await head();
      const http = await import('node:http');
      const boundary = 'cut-off-boundary';
      const req = http.request(`${service.ingestionUrl}/api/training/files`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '10000000' },
      });
      req.on('error', () => {});
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="cut.csv"\r\nContent-Type: text/csv\r\n\r\n`);
      req.write('timestamp,accX\n0,1\n10,2\n'.repeat(1000));
      await new Promise((r) => setTimeout(r, 100));
      req.destroy();
      const { readdir } = await import('node:fs/promises');
      // Each service receives into its own folder under incoming/: no file may be left in any.
      const incoming = `${service.config.dataDir}/incoming`;
      const files = async () => (await readdir(incoming, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
      for (let i = 0; i < 50 && (await files()).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await files()).toEqual([]);
      expect(await head()).toBe(before);
    });

    it('refuses more than 1000 files in one request, storing none', async () => {
      const before = await head();
      const form = new FormData();
      for (let i = 0; i < 1001; i++) form.append('data', new Blob([signedSample(hmacKey, rows(1))], { type: 'application/json' }), `many.${i}.json`);
      const res = await ingest('/api/training/files', form);
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/1000/);
      expect(await head()).toBe(before);
    });

    it('keeps anomaly uploads apart from the data sets', async () => {
      const res = await ingest('/api/anomaly/data', signedSample(hmacKey, rows(3)), { 'content-type': 'application/json', 'x-file-name': 'field.json' });
      expect(res.status).toBe(200);
      expect((await samples('category=all')).samples.map((s) => s.filename)).not.toContain('field.json');
    });

    it('follows deletes in the summaries, and delete-all empties a category', async () => {
      expect((await call(service, 'POST', `/api/${projectId}/raw-data/delete-all/testing`, { headers: { 'x-jwt-token': token } })).status).toBe(200);
      expect((await info()).dataSummaryPerCategory).toMatchObject({ testing: { dataCount: 0, totalLengthMs: 0, labels: [] } });
      expect((await call(service, 'POST', `/api/${projectId}/raw-data/delete-all`, { headers: { 'x-jwt-token': token } })).status).toBe(200);
      expect((await info()).dataSummary).toMatchObject({ dataCount: 0, totalLengthMs: 0, labels: [], totalLabels: 0 });
      expect((await call(service, 'GET', `/api/${projectId}/raw-data/count?category=all`, { headers: { 'x-jwt-token': token } })).body.count).toBe(0);
    });
  });
}
