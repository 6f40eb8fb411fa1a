import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { keepAliveCall } from '../support/keepAliveCall';
import type { CatchUpProgress } from '../../service/catchUpProgress';
import { retryAfterSeconds, StartingGate, startingApiApp, startingIngestionApp, type StartingState } from '../../service/startingGate';
import type { ProjectionFailure } from '../../projections/projectionStatus';

const silent = pino({ level: 'silent' });

const servers: http.Server[] = [];
const agents: http.Agent[] = [];

afterEach(async () => {
  for (const a of agents.splice(0)) a.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(listener: http.RequestListener): Promise<{ url: string; agent: http.Agent }> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, agent };
}

const call = keepAliveCall;

const halfway: CatchUpProgress = { position: '500', head: '1000', percent: 50, perSecond: 100, seconds: 5, secondsLeft: 5 };

function state(progress: CatchUpProgress | undefined, failures: () => Promise<ProjectionFailure[]> = async () => []): StartingState {
  return { doing: 'catching up the read models', progress: () => progress, health: { failures } };
}

describe('the starting gate', () => {
  it('hands requests to the starting listener until opened, then to the app, on the same kept-alive connection', async () => {
    const gate = new StartingGate((_req, res) => {
      res.statusCode = 503;
      res.end('starting');
    });
    const { url, agent } = await serve(gate.listener);
    const before = await call(agent, `${url}/anything`);
    gate.open((_req, res) => res.end('app'));
    const after = await call(agent, `${url}/anything`);
    expect([before.status, before.text, after.status, after.text]).toEqual([503, 'starting', 200, 'app']);
    expect(after.socket).toBe(before.socket);
  });
});

describe('the management API while starting', () => {
  it('answers /health 503 in its usual shape, with status "starting", the progress and the projections failed meanwhile', async () => {
    const failure: ProjectionFailure = {
      projection: 'devices', position: '42', eventType: 'DeviceRenamed', streamId: 'device-1', eventId: 'e1', error: 'boom', since: '2026-01-01T00:00:00.000Z', attempts: 2, nextAttempt: null,
    };
    const { url, agent } = await serve(startingApiApp(state(halfway, async () => [failure]), silent).callback());
    const health = await call(agent, `${url}/health`);
    expect(health.status).toBe(503);
    expect(health.headers['retry-after']).toBe('5');
    expect(health.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(health.text)).toEqual({
      success: false,
      status: 'starting',
      error: 'The service is starting: catching up the read models, 50% of the log applied (position 500 of 1000, 100 a second, about 5 s left)',
      failingProjections: [failure],
      catchUp: halfway,
    });
  });

  it('still says it is starting when the projections\' status cannot be read', async () => {
    const { url, agent } = await serve(startingApiApp(state(halfway, () => Promise.reject(new Error('store down'))), silent).callback());
    const health = await call(agent, `${url}/health`);
    expect(health.status).toBe(503);
    expect(JSON.parse(health.text)).toMatchObject({ status: 'starting', failingProjections: [] });
  });

  it('refuses every other request with 503, Retry-After and the JSON envelope, without reading its body', async () => {
    const { url, agent } = await serve(startingApiApp(state(halfway), silent).callback());
    const big = Buffer.alloc(3 * 1024 * 1024, 'x');
    const post = await call(agent, `${url}/v1/api/projects/create`, 'POST', big, { 'content-type': 'application/json' });
    const get = await call(agent, `${url}/v1/api/user`);
    const unknown = await call(agent, `${url}/no/such/path`, 'DELETE');
    for (const answer of [post, get, unknown]) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('5');
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toEqual({
        success: false,
        error: 'The service is starting: catching up the read models, 50% of the log applied (position 500 of 1000, 100 a second, about 5 s left). Nothing was changed; try again in 5 s',
      });
    }
    // The unread body was skipped, and the connection goes on.
    expect(new Set([post.socket, get.socket, unknown.socket]).size).toBe(1);
  });

  it('says only that it is starting before the catch-up has begun', async () => {
    const { url, agent } = await serve(startingApiApp(state(undefined), silent).callback());
    const answer = await call(agent, `${url}/v1/api/user`);
    expect(answer.headers['retry-after']).toBe('5');
    expect(JSON.parse(answer.text)).toEqual({ success: false, error: 'The service is starting: catching up the read models. Nothing was changed; try again in 5 s' });
    const health = JSON.parse((await call(agent, `${url}/health`)).text) as { catchUp: unknown };
    expect(health.catchUp).toBeNull();
  });
});

describe('the ingestion API while starting', () => {
  it('refuses an upload with 503, Retry-After and a text that says the sample was not recorded', async () => {
    const { url, agent } = await serve(startingIngestionApp(state(halfway), silent).callback());
    const answer = await call(agent, `${url}/api/training/data`, 'POST', '{"payload":{}}', { 'content-type': 'application/json', 'x-api-key': 'ei_x', 'x-file-name': 'a.json' });
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    expect(answer.text).toBe('The service is starting: catching up the read models, 50% of the log applied (position 500 of 1000, 100 a second, about 5 s left). The sample was not recorded; try again in 5 s');
  });

  it('answers its /health in JSON, as its usual /health', async () => {
    const { url, agent } = await serve(startingIngestionApp(state(halfway), silent).callback());
    const health = await call(agent, `${url}/health`);
    expect(health.status).toBe(503);
    expect(JSON.parse(health.text)).toMatchObject({ success: false, status: 'starting', catchUp: halfway });
  });
});

describe('the Retry-After of a starting answer', () => {
  it('is the estimated time left, at least 1 s and at most 30 s, and 5 s without an estimate', () => {
    expect(retryAfterSeconds(undefined)).toBe(5);
    expect(retryAfterSeconds({ ...halfway, perSecond: null, secondsLeft: null })).toBe(5);
    expect(retryAfterSeconds({ ...halfway, secondsLeft: 0 })).toBe(1);
    expect(retryAfterSeconds({ ...halfway, secondsLeft: 12 })).toBe(12);
    expect(retryAfterSeconds({ ...halfway, secondsLeft: 600 })).toBe(30);
  });
});
