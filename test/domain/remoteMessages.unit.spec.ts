import { describe, expect, it } from 'vitest';
import { parseDeviceMessage, REMOTE_FRAME_MAX_BYTES, REMOTE_HELLO_MAX_BYTES, type DeviceMessage } from '../../domain/device/remoteMessages';

// The hello the official CLI sends (remote-mgmt-service.js sendHello) for `--disable-microphone --fake-camera`.
const cliHello = {
  hello: {
    apiKey: 'ei_0123456789abcdef',
    deviceId: 'ac:87:a3:0a:2b:11',
    deviceType: 'EDGE_IMPULSE_LINUX',
    connection: 'ip',
    sensors: [{ name: 'Camera (640x480)', frequencies: [], maxSampleLengthS: 60000 }],
    supportsSnapshotStreaming: true,
    version: 4,
    mode: 'ingestion',
  },
};

const ok = (frame: unknown): DeviceMessage => {
  const r = parseDeviceMessage(typeof frame === 'string' ? frame : JSON.stringify(frame));
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.value;
};
const refused = (frame: unknown): string => {
  const r = parseDeviceMessage(typeof frame === 'string' ? frame : JSON.stringify(frame));
  if (r.ok) throw new Error(`accepted: ${JSON.stringify(r.value)}`);
  return r.reason;
};
const hello = (overrides: Record<string, unknown>) => ({ hello: { ...cliHello.hello, ...overrides } });

describe('hello', () => {
  it('version 4 in ingestion mode, as the official CLI sends it', () => {
    expect(ok(cliHello)).toEqual({
      kind: 'hello',
      hello: {
        version: 4,
        apiKey: 'ei_0123456789abcdef',
        deviceId: 'ac:87:a3:0a:2b:11',
        deviceType: 'EDGE_IMPULSE_LINUX',
        connection: 'ip',
        sensors: [{ name: 'Camera (640x480)', frequencies: [], maxSampleLengthS: 60000 }],
        supportsSnapshotStreaming: true,
        mode: 'ingestion',
      },
    });
  });

  it('version 4 in inference mode, with the API spelling of the deployed version and model type', () => {
    const m = ok(
      hello({
        mode: 'inference',
        inferenceInfo: { projectId: 7, projectOwner: 'Ada', projectName: 'Kws', deploymentVersion: 3, modelType: 'constrained_object_detection' },
        availableRecords: { firstIndex: 0, firstTimestamp: 0, lastIndex: 0, lastTimestamp: 0 },
      }),
    );
    expect(m.kind === 'hello' && m.hello).toMatchObject({
      mode: 'inference',
      inferenceInfo: { projectId: 7, projectOwner: 'Ada', projectName: 'Kws', deployedVersion: 3, modelType: 'constrainedObjectDetection' },
    });
  });

  it('inference mode without inferenceInfo is refused', () => {
    expect(refused(hello({ mode: 'inference' }))).toMatch(/inference mode must carry "inferenceInfo"/);
  });

  it('versions 2 and 3 have no mode: ingestion; a mode they send is ignored', () => {
    for (const version of [2, 3]) {
      const { mode: _mode, ...rest } = cliHello.hello;
      const m = ok({ hello: { ...rest, version } });
      expect(m.kind === 'hello' && [m.hello.version, m.hello.mode]).toEqual([version, 'ingestion']);
    }
    const m = ok(hello({ version: 3, mode: 'inference' }));
    expect(m.kind === 'hello' && m.hello.mode).toBe('ingestion');
  });

  it('version 1 names its sensors only; missing optional fields get defaults', () => {
    const m = ok({ hello: { version: 1, apiKey: 'ei_k', deviceId: 'dev-1', deviceType: 'ARDUINO', sensors: ['Accelerometer', 'Microphone'] } });
    expect(m).toEqual({
      kind: 'hello',
      hello: {
        version: 1,
        apiKey: 'ei_k',
        deviceId: 'dev-1',
        deviceType: 'ARDUINO',
        connection: 'ip',
        sensors: [
          { name: 'Accelerometer', maxSampleLengthS: 0, frequencies: [] },
          { name: 'Microphone', maxSampleLengthS: 0, frequencies: [] },
        ],
        supportsSnapshotStreaming: false,
        mode: 'ingestion',
      },
    });
  });

  it('is refused without a key, a device id or a known version', () => {
    expect(refused(hello({ apiKey: undefined }))).toMatch(/Invalid hello: apiKey/);
    expect(refused(hello({ apiKey: '' }))).toMatch(/API key \("apiKey"\) is missing/);
    expect(refused(hello({ deviceId: '' }))).toMatch(/Device id \("deviceId"\) is empty/);
    expect(refused(hello({ version: 5 }))).toMatch(/Invalid hello/);
    expect(refused(hello({ version: '4' }))).toMatch(/Invalid hello/);
    expect(refused({ hello: 'hi' })).toMatch(/Invalid hello/);
  });

  it('is refused hostile ids and types', () => {
    expect(refused(hello({ deviceId: 'a\u202Eb' }))).toMatch(/"deviceId"\) contains an invisible formatting character/);
    expect(refused(hello({ deviceType: 'x\u0000' }))).toMatch(/"deviceType"\) contains a control character/);
    expect(refused(hello({ deviceId: 'd'.repeat(257) }))).toMatch(/"deviceId"\) is 257 characters long/);
  });

  it('is refused absurd sensors: frequencies, lengths, names, counts, duplicates', () => {
    const s = (over: Record<string, unknown>) => hello({ sensors: [{ name: 'Accelerometer', frequencies: [62.5], maxSampleLengthS: 60, ...over }] });
    expect(refused(s({ frequencies: [0] }))).toMatch(/above 0 Hz/);
    expect(refused(s({ frequencies: [-1] }))).toMatch(/above 0 Hz/);
    expect(refused(s({ frequencies: [1e9] }))).toMatch(/at most 1000000 Hz/);
    expect(refused(s({ frequencies: ['100'] }))).toMatch(/Invalid hello: sensors/);
    expect(refused(s({ frequencies: Array(17).fill(100) }))).toMatch(/Invalid hello: sensors/);
    expect(refused(s({ maxSampleLengthS: -1 }))).toMatch(/maxSampleLengthS/);
    expect(refused(s({ maxSampleLengthS: 1e12 }))).toMatch(/maxSampleLengthS/);
    expect(refused(s({ name: '' }))).toMatch(/Sensor name is empty/);
    expect(refused(s({ name: 'n'.repeat(129) }))).toMatch(/Sensor name is 129 characters long/);
    expect(refused(s({ name: 'Cam\u2066' }))).toMatch(/Sensor name contains an invisible formatting character/);
    expect(refused(s({ extra: 1 }))).toMatch(/Invalid hello: sensors/);
    expect(refused(hello({ sensors: Array.from({ length: 65 }, (_, i) => ({ name: `s${i}`, frequencies: [], maxSampleLengthS: 1 })) }))).toMatch(/Invalid hello: sensors/);
    expect(refused(hello({ sensors: [{ name: 'A', frequencies: [], maxSampleLengthS: 1 }, { name: 'A', frequencies: [], maxSampleLengthS: 2 }] }))).toMatch(/same name/);
    // NaN and Infinity cannot be written in JSON; 1e999 parses as Infinity.
    expect(refused('{"hello":{"version":4,"apiKey":"k","deviceId":"d","deviceType":"t","sensors":[{"name":"A","frequencies":[1e999],"maxSampleLengthS":1}]}}')).toMatch(/Invalid hello/);
  });

  it('is refused above its own size limit, though smaller than a frame', () => {
    const big = hello({ deviceType: 'T', padding: 'x'.repeat(REMOTE_HELLO_MAX_BYTES) });
    expect(refused(big)).toMatch(/Hello is \d+ bytes; at most 16384/);
  });
});

describe('sampling and snapshot messages', () => {
  it('passes every progress message the library sends', () => {
    expect(ok({ sample: true })).toEqual({ kind: 'sampleAccepted' });
    expect(ok({ sample: false, error: 'Linux daemon was started with --no-camera' })).toEqual({ kind: 'sampleFailed', error: 'Linux daemon was started with --no-camera' });
    expect(ok({ sample: false })).toEqual({ kind: 'sampleFailed', error: 'No error message' });
    expect(ok({ sampleStarted: true })).toEqual({ kind: 'sampleStarted' });
    expect(ok({ sampleReading: true, progressPercentage: 42.5 })).toEqual({ kind: 'sampleReading', progressPercentage: 42.5 });
    expect(ok({ sampleUploading: true })).toEqual({ kind: 'sampleUploading' });
    expect(ok({ sampleProcessing: true })).toEqual({ kind: 'sampleProcessing' });
    expect(ok({ sampleFinished: true })).toEqual({ kind: 'sampleFinished' });
    expect(ok({ snapshotStarted: true })).toEqual({ kind: 'snapshotStarted' });
    expect(ok({ snapshotStopped: true })).toEqual({ kind: 'snapshotStopped' });
    expect(ok({ snapshotFailed: true, error: 'Device is sampling, cannot start snapshot stream' })).toEqual({ kind: 'snapshotFailed', error: 'Device is sampling, cannot start snapshot stream' });
    expect(ok({ snapshotFrame: '/9j/4AAQ', fileName: 'snapshot.jpg' })).toEqual({ kind: 'snapshotFrame', snapshotFrame: '/9j/4AAQ', fileName: 'snapshot.jpg' });
  });

  it("keeps a device's error text, however it is made, on one bounded line", () => {
    // The library passes on an upload's answer body as its error: a proxy's HTML page is long and multi-line.
    const page = `<html>\r\n<head><title>502 Bad Gateway</title></head>\n<body>${'x'.repeat(5000)}</body>\n</html>`;
    const failed = ok({ sample: false, error: page }) as { kind: string; error: string };
    expect(failed.kind).toBe('sampleFailed');
    expect(failed.error.startsWith('<html> <head><title>502 Bad Gateway</title></head> <body>xx')).toBe(true);
    expect(failed.error).toHaveLength(1024);
    expect(ok({ sample: false, error: 'e\u202Ef\u0000' })).toEqual({ kind: 'sampleFailed', error: 'e\uFFFDf\uFFFD' });
    expect(ok({ sample: false, error: ' \n ' })).toEqual({ kind: 'sampleFailed', error: 'No error message' });
    expect(ok({ snapshotFailed: true, error: 'no\ncamera' })).toEqual({ kind: 'snapshotFailed', error: 'no camera' });
  });

  it('recognises the inference-mode messages it does not act on', () => {
    expect(ok({ inferenceSummary: { start: 0 } })).toEqual({ kind: 'ignored', key: 'inferenceSummary' });
    expect(ok({ modelUpdateSuccess: false, error: 'x' })).toEqual({ kind: 'ignored', key: 'modelUpdateSuccess' });
  });

  it('refuses malformed progress, errors and frames', () => {
    expect(refused({ sampleReading: true, progressPercentage: 140 })).toMatch(/0 to 100/);
    expect(refused({ sampleReading: true })).toMatch(/0 to 100/);
    expect(refused({ sample: 'yes' })).toMatch(/Invalid sample answer/);
    expect(refused({ sample: false, error: 42 })).toMatch(/Invalid sample answer/);
    expect(refused({ snapshotFrame: 'not base64!', fileName: 'a.jpg' })).toMatch(/must be base64/);
    expect(refused({ snapshotFrame: 'AAAA', fileName: '../\u0000' })).toMatch(/fileName contains a control character/);
  });
});

describe('any frame', () => {
  it('is refused when not a JSON object', () => {
    expect(refused('not json')).toBe('Message is not JSON');
    expect(refused('')).toBe('Message is not JSON');
    for (const f of ['[]', 'null', '42', '"hello"']) expect(refused(f)).toBe('Message is not a JSON object');
  });

  it('is refused when unknown', () => {
    expect(refused({})).toBe('Unknown message');
    expect(refused({ sampleStarted: false })).toBe('Unknown message');
    expect(refused('{"__proto__":{"hello":1}}')).toBe('Unknown message');
  });

  it('is refused above the frame limit, before parsing', () => {
    const r = parseDeviceMessage(`{"snapshotFrame":"${'A'.repeat(REMOTE_FRAME_MAX_BYTES)}","fileName":"a.jpg"}`);
    expect(r).toEqual({ ok: false, reason: expect.stringMatching(/bytes; at most 262144 are allowed/) });
  });

  it('accepts a snapshot frame of 200 KB', () => {
    expect(ok({ snapshotFrame: 'A'.repeat(200_000), fileName: 'a.jpg' }).kind).toBe('snapshotFrame');
  });
});
