import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveEim } from '../../commands/deployment/eimServer';
import type { EimRunner, EimSpecView } from '../../domain/deployment/eimProtocol';
import { eimExchange, eimReceived } from '../support/eimSocket';

// The .eim's protocol server against a runner of our own: what it answers to each message, and
// that bad input gets an error answer while the server goes on serving.
const spec: EimSpecView = {
  inputBlock: { type: 'time-series', axes: ['accX', 'accY'], windowSizeMs: 500, frequencyHz: 100 },
  learnBlocks: [
    { type: 'keras', id: 3, minimumConfidenceRating: 0.6 },
    { type: 'anomaly', id: 4, minimumConfidenceRating: 0.3 },
  ],
};
const runner: EimRunner = {
  rawValueCount: 100,
  labels: ['idle', 'wave'],
  async classify(raw) {
    if (raw[0] === 42) throw new Error('the model broke');
    return { classification: { idle: raw[0]!, wave: 1 - raw[0]! }, anomaly: -0.5, timing: { dsp: 1, classification: 2, anomaly: 0 } };
  },
};
const project = { id: 7, name: 'Motion', owner: '', deployVersion: 3 };

let dir: string;
let server: Server;
let socketPath: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eim-server-'));
  socketPath = path.join(dir, 'runner.sock');
  server = await serveEim(socketPath, spec, runner, project);
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** Sends raw text; resolves with the next `count` answer lines. */
const exchange = (text: string, count = 1) => eimExchange(socketPath, text, count);
/** Sends raw text; resolves with the next answer line as sent. */
const rawExchange = (text: string) => eimReceived(socketPath, text);

describe('the .eim protocol server', () => {
  it('escapes braces inside strings: the official runner splits answers by counting braces, quoted or not', async () => {
    const line = await rawExchange('{"mystery{":1,"id":9}\n');
    expect(line).not.toMatch(/"[^"]*[{}][^"]*"/);
    expect(line.split('{').length).toBe(line.split('}').length);
    expect(JSON.parse(line)).toMatchObject({ id: 9, success: false, error: expect.stringContaining('Unknown message "mystery{"') });
  });

  it('answers hello with the model parameters and project the Linux runner reads', async () => {
    const [hello] = await exchange('{"hello":1,"id":1}\n');
    expect(hello).toEqual({
      id: 1,
      success: true,
      model_parameters: {
        axis_count: 2, frequency: 100, has_anomaly: 1, input_features_count: 100, image_input_height: 0, image_input_width: 0, image_input_frames: 0, image_channel_count: 0,
        interval_ms: 10, label_count: 2, sensor: 2, labels: ['idle', 'wave'], model_type: 'classification', use_continuous_mode: false, has_performance_calibration: false, inferencing_engine: 255,
        thresholds: [{ id: 3, type: 'classification', min_score: 0.6 }, { id: 4, type: 'anomaly_gmm', min_anomaly_score: 0.3 }],
      },
      project: { deploy_version: 3, id: 7, name: 'Motion', owner: '' },
      inferencing_engine: { inferencing_engine: 255, properties: ['tensorflowjs', 'cpu'] },
    });
  });

  it('answers classify with the classification, anomaly and timing, in the order asked, over one connection', async () => {
    const window = (first: number) => JSON.stringify({ classify: [first, ...Array(99).fill(0)], id: first * 10 });
    const answers = await exchange(`${window(0.25)}\n${window(0.5)}\n`, 2);
    expect(answers).toEqual([
      { id: 2.5, success: true, result: { classification: { idle: 0.25, wave: 0.75 }, anomaly: -0.5 }, timing: { dsp: 1, classification: 2, anomaly: 0 } },
      { id: 5, success: true, result: { classification: { idle: 0.5, wave: 0.5 }, anomaly: -0.5 }, timing: { dsp: 1, classification: 2, anomaly: 0 } },
    ]);
  });

  it('answers bad input with an error and goes on serving: wrong count, not numbers, not JSON, unknown or unsupported messages, a failing model', async () => {
    const answers = await exchange(
      [
        '{"classify":[1,2,3],"id":1}',
        `{"classify":[${['"a"', ...Array(99).fill(0)].join(',')}],"id":2}`,
        'this is not json',
        '[1,2]',
        '{"explode":true,"id":3}',
        '{"classify_shm":{"elements":100},"id":4}',
        `{"classify":[42${',0'.repeat(99)}],"id":5}`,
        '{"hello":1,"id":6}',
      ].join('\n') + '\n',
      8,
    );
    expect(answers[0]).toEqual({ id: 1, success: false, error: 'classify: expected 100 values (input_features_count), got 3' });
    expect(answers[1]).toMatchObject({ id: 2, success: false, error: 'classify: value 0 is not a finite number' });
    expect(answers[2]).toMatchObject({ success: false, error: expect.stringMatching(/^Not JSON/) });
    expect(answers[3]).toMatchObject({ success: false, error: expect.stringMatching(/Send a JSON object/) });
    expect(answers[4]).toMatchObject({ id: 3, success: false, error: expect.stringMatching(/Unknown message "explode"/) });
    expect(answers[5]).toMatchObject({ id: 4, success: false, error: expect.stringMatching(/no shared memory/) });
    expect(answers[6]).toMatchObject({ id: 5, success: false, error: 'classify failed: the model broke' });
    expect(answers[7]).toMatchObject({ id: 6, success: true });
  });

  it('answers an unexpected failure with an error and goes on serving the next lines', async () => {
    const brokenPath = path.join(dir, 'broken.sock');
    const broken: EimRunner = {
      ...runner,
      get labels(): string[] {
        throw new Error('labels unreadable');
      },
    };
    const server2 = await serveEim(brokenPath, spec, broken, project);
    try {
      const answers = await eimExchange(brokenPath, `{"hello":1,"id":1}\n{"classify":[0.5${',0'.repeat(99)}],"id":2}\n`, 2);
      expect(answers[0]).toEqual({ id: 1, success: false, error: 'labels unreadable' });
      expect(answers[1]).toMatchObject({ id: 2, success: true });
    } finally {
      await new Promise((resolve) => server2.close(resolve));
    }
  });
});
