// 1,000 simulated devices connected to one process on the remote-management socket (issue 26), from
// a process of their own (bench/deviceSwarm.ts), while a load generator in a third process reads
// `GET /v1/api/{projectId}/devices` (the 1,000 devices, listed connected) over 32 keep-alive
// connections. Measured in one run:
// - the connection of the 1,000: seconds, and each hello's round trip (the hello is answered once its
//   DeviceConnected event is in the log);
// - the service process's memory with them held (the service runs in this process);
// - the devices' pings: each device pings once a second (the library pings every 30 s, so this is 30
//   times the real rate) and times its pong, while the GETs run;
// - how soon the devices are listed disconnected once their process is killed;
// - `GET devices` with the swarm connected and pinging, against a bare Koa handler in this process
//   answering the same JSON (the ceiling), taking turns round by round.
// Every answer is checked (200 and the success envelope; the service's lists the 1,000 connected).
import http from 'node:http';
import Koa from 'koa';
import type { BenchResult } from './benchResult';
import { HOST, closeServer, expectOk, listen, ownerWithProject, quantiles, request, startBenchService } from './benchKit';
import { startSwarm, type Swarm } from './deviceSwarm';
import { roundsInTurn, startLoadGenerator } from './loadGenerator';

const DEVICES = Number(process.env.BENCH_REMOTE_DEVICES ?? 1_000);
const CONNECT_CONCURRENCY = 50;
const PING_EVERY_MS = 1_000;
const CONNECTIONS = 32;
const ROUNDS = 6;
const ROUND_MS = 500;
const WARMUP_MS = 300;
/** The aims: GET devices at half of bare Koa or better, pongs within 50 ms at p99 when the API is quiet, no device dropped. */
const AIM_RATIO = 0.5;
const AIM_PONG_P99_MS = 50;
/** How long the pings are timed with no GET running. */
const QUIET_MS = 3_000;

export async function benchRemoteDevices(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let started: Awaited<ReturnType<typeof startBenchService>> | undefined;
  let bare: http.Server | undefined;
  let load: Awaited<ReturnType<typeof startLoadGenerator>> | undefined;
  let swarm: Swarm | undefined;
  try {
    started = await startBenchService('remotedevices');
    const { service } = started;
    const api = service.apiUrl;
    const remote = service.remoteMgmtUrl;
    if (!api || !remote) throw new Error('the service started without its api and remote roles');
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchdevices', 'Bench remote devices');
    const path = `/v1/api/${projectId}/devices`;
    const headers = { 'x-jwt-token': token };

    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    swarm = await startSwarm();
    const connected = await swarm.connect({ url: remote, apiKey, devices: DEVICES, connectConcurrency: CONNECT_CONCURRENCY, pingEveryMs: PING_EVERY_MS });
    if (connected.connected !== DEVICES) throw new Error(`${connected.connected} of ${DEVICES} devices connected; refused: ${connected.refused.slice(0, 3).join('; ')}`);
    // The list is read from the read model: wait until it shows all of them connected.
    if (!(await service.readModels.waitFor((await service.stores.events.headPosition())!, 60_000))) throw new Error("the read models did not reach the log's head within 60 s");
    const answer = expectOk(await request(agent, new URL(path, api), 'GET', headers), `GET ${path}`);
    const listed = (JSON.parse(answer) as { devices: { remote_mgmt_connected: boolean }[] }).devices;
    const connectedListed = listed.filter((d) => d.remote_mgmt_connected).length;
    if (connectedListed !== DEVICES) throw new Error(`GET ${path} lists ${connectedListed} of ${DEVICES} devices connected`);
    global.gc?.();
    const rssWith = process.memoryUsage().rss;

    // The ceiling answers the service's own text, already serialized: the service keeps its answers
    // between changes (docs/read-models.md), so a handler that stringified per call would be no ceiling.
    const app = new Koa();
    app.use(async (ctx) => {
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = answer;
    });
    bare = http.createServer(app.callback());
    const bareUrl = `http://${HOST}:${await listen(bare)}`;
    const contenders = [
      { name: 'service', url: `${api}${path}`, headers },
      { name: 'bare Koa', url: `${bareUrl}${path}`, headers },
    ];
    // Pings with nothing else to do, then with the GETs running.
    await swarm.figures();
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    const quiet = await swarm.figures();
    load = await startLoadGenerator(contenders.map((c) => ({ kind: 'get' as const, ...c })), CONNECTIONS);
    for (const c of contenders) await load.round(c.name, WARMUP_MS);
    await swarm.figures(); // the pongs of the warm-up are not counted
    const results = await roundsInTurn(load, contenders.map((c) => c.name), ROUNDS, ROUND_MS);
    const during = await swarm.figures();

    // Their loss: the devices' process killed, how long until the list shows none connected.
    const killed = performance.now();
    await swarm.kill();
    let stillConnected = DEVICES;
    while (stillConnected > 0) {
      if (performance.now() - killed > 60_000) throw new Error(`${stillConnected} devices still listed connected 60 s after their process was killed`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const text = expectOk(await request(agent, new URL(path, api), 'GET', headers), `GET ${path}`);
      stillConnected = (JSON.parse(text) as { devices: { remote_mgmt_connected: boolean }[] }).devices.filter((d) => d.remote_mgmt_connected).length;
    }
    const lossListedSeconds = (performance.now() - killed) / 1000;

    const rate = (name: string) => {
      const rs = results.get(name)!;
      return rs.reduce((a, r) => a + r.ops, 0) / rs.reduce((a, r) => a + r.seconds, 0);
    };
    const lat = (name: string) => {
      const [p50, p99, max] = quantiles(results.get(name)!.flatMap((r) => r.latencies), [0.5, 0.99, 1]);
      return `${Math.round(rate(name)).toLocaleString('en-US')}/s, p50 ${p50!.toFixed(2)} ms, p99 ${p99!.toFixed(2)} ms, max ${max!.toFixed(1)} ms`;
    };
    const [hello50, hello99] = quantiles(connected.helloMs, [0.5, 0.99]);
    const [pong50, pong99, pongMax] = quantiles(during.pongMs, [0.5, 0.99, 1]);
    const [quiet50, quiet99, quietMax] = quantiles(quiet.pongMs, [0.5, 0.99, 1]);
    const ratio = rate('service') / rate('bare Koa');
    const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
    return {
      name: `remoteDevices: ${DEVICES.toLocaleString('en-US')} simulated devices on the remote-management socket of one process, GET devices meanwhile`,
      lines: [
        'service in this process; devices in a child process; load generator in another; bare Koa in the service\'s process, on its own port',
        `connect: ${DEVICES.toLocaleString('en-US')} hellos, ${CONNECT_CONCURRENCY} at a time, in ${connected.connectSeconds.toFixed(2)} s (${Math.round(DEVICES / connected.connectSeconds)}/s); hello round trip p50 ${hello50!.toFixed(1)} ms, p99 ${hello99!.toFixed(1)} ms`,
        `memory: the service process's RSS ${mib(rssBefore)} MiB before, ${mib(rssWith)} MiB with the devices held and listed (${((rssWith - rssBefore) / DEVICES / 1024).toFixed(1)} KiB a device)`,
        `GET ${path} (${DEVICES.toLocaleString('en-US')} devices, ${Buffer.byteLength(answer).toLocaleString('en-US')} bytes), ${CONNECTIONS} keep-alive connections:`,
        `  service  ${lat('service')}`,
        `  bare Koa ${lat('bare Koa')}`,
        `  service/bare-Koa ${ratio.toFixed(3)} (aim: ${AIM_RATIO} or more)`,
        `pings, each device once a second: with the API quiet ${quiet.pongMs.length.toLocaleString('en-US')} pongs, p50 ${quiet50!.toFixed(2)} ms, p99 ${quiet99!.toFixed(2)} ms, max ${quietMax!.toFixed(1)} ms (aim: p99 under ${AIM_PONG_P99_MS} ms); ` +
          `during the GETs ${during.pongMs.length.toLocaleString('en-US')} pongs, p50 ${pong50!.toFixed(2)} ms, p99 ${pong99!.toFixed(2)} ms, max ${pongMax!.toFixed(1)} ms (the library waits 6 s); ` +
          `${quiet.missedPongs + during.missedPongs} pings without a pong before the next; ${during.closed} devices dropped`,
        `loss: the devices' process killed, all ${DEVICES.toLocaleString('en-US')} listed disconnected after ${lossListedSeconds.toFixed(2)} s (the cut sockets' ends; a silent device would take up to 42.5 s)`,
        `${ROUNDS} rounds of ${ROUND_MS} ms per contender, taking turns, after ${WARMUP_MS} ms of warm-up each; every answer checked`,
      ],
    };
  } finally {
    await load?.stop();
    await swarm?.stop();
    agent.destroy();
    await closeServer(bare);
    await started?.stop();
  }
}
