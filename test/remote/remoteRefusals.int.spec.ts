// Refusals that must let the device come back (closed without a hello reply, which would stop the
// official library for good) and record nothing: read models standing still, too many hellos at
// once, a log that fails to append. Each is a remote role of its own on one test service's stores.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectionHealth } from '../../projections/projectionStatus';
import type { RemoteLimits } from '../../remote/remoteServer';
import type { Stores } from '../../service/composition';
import { listenRemote, type RemoteRole } from '../../service/roles/remoteRole';
import { connectDevice, linuxHello } from '../support/remoteDevice';
import { adaWithProject, startTestService, type TestService } from '../support/testService';

describe('refusals the device retries', () => {
  let service: TestService;
  let apiKey: string;
  const roles: RemoteRole[] = [];
  const healthy: ProjectionHealth = { failures: async () => [] };

  const role = async (options: { stores?: Stores; health?: ProjectionHealth; limits?: Partial<RemoteLimits> } = {}) => {
    const r = await listenRemote({ config: service.config, log: pino({ level: 'silent' }), starting: { doing: 'starting', progress: () => undefined, health: healthy } });
    roles.push(r);
    await r.open({ stores: options.stores ?? service.stores, health: options.health ?? healthy, ...(options.limits ? { limits: options.limits } : {}) });
    return r;
  };
  /** Says hello and answers the frames the server sent and how the socket ended. */
  const helloTo = async (r: RemoteRole, key = apiKey, deviceId = 'dev-retry') => {
    const d = await connectDevice(r.url);
    const frames: unknown[] = [];
    d.ws.on('message', (data) => frames.push(JSON.parse(String(data))));
    d.send(linuxHello(key, deviceId));
    const closed = await d.closed;
    return { frames, closed };
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    ({ apiKey } = await adaWithProject(service, 'Retries'));
  });
  afterAll(async () => {
    for (const r of roles) {
      await r.closeSockets();
      await new Promise((resolve) => r.server.close(resolve));
    }
    await service?.destroy();
  });

  it('closes an unknown key unanswered (1013) while the read models stand still behind the log', async () => {
    const stalled = await role({ health: { failures: async () => [], stall: () => ({ position: 1n, head: 2n, since: Date.now() - 60_000 }) } });
    const before = await service.stores.events.headPosition();
    const { frames, closed } = await helloTo(stalled, 'ei_ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff');
    expect(frames).toEqual([]);
    expect(closed.code).toBe(1013);
    expect(await service.stores.events.headPosition()).toBe(before);
  });

  it('closes a hello unanswered (1013) when too many are in progress', async () => {
    const busy = await role({ limits: { maxHellosInProgress: 0 } });
    const before = await service.stores.events.headPosition();
    const { frames, closed } = await helloTo(busy);
    expect(frames).toEqual([]);
    expect(closed.code).toBe(1013);
    expect(await service.stores.events.headPosition()).toBe(before);
  });

  it('closes a hello unanswered (1011) when the log cannot record it, and keeps serving', async () => {
    const failing = new Proxy(service.stores.events, {
      get(target, property, receiver) {
        if (property === 'appendToStream') return () => Promise.reject(new Error('the disk went away'));
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const broken = await role({ stores: { ...service.stores, events: failing } });
    const before = await service.stores.events.headPosition();
    const first = await helloTo(broken);
    expect(first.frames).toEqual([]);
    expect(first.closed.code).toBe(1011);
    expect(await service.stores.events.headPosition()).toBe(before);
    // The same server goes on serving: a bad key is still answered, and no socket is left held.
    const next = await helloTo(broken, 'ei_0000000000000000000000000000000000000000000000000000000000000000');
    expect(next.frames).toEqual([expect.objectContaining({ hello: false, auth: false })]);
    expect(broken.registry?.size).toBe(0);
  });
});
