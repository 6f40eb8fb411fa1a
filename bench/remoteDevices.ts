// 1,000 simulated devices on the remote-management websocket of one service process (issue 26): how
// long they take to connect (hello, authentication, DeviceConnected each), and the latency of
// `GET /v1/api/{projectId}/devices` (the 1,000 devices listed) while they stay connected and ping,
// against the same call once they are gone. The devices run in a child process
// (bench/remoteDevicesClient.ts) and ping every PING_MS, 30 times as often as the official library,
// with the server's own pings every second.
import { fork } from 'node:child_process';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchResult } from './benchResult';
import { JSON_HEADERS, expectOk, ownerWithProject, quantiles, request, startBenchService } from './benchKit';

const DEVICES = Number(process.env.BENCH_REMOTE_DEVICES ?? 1000);
const PING_MS = 1000;
const CONNECTIONS = 8;
const ROUND_MS = 5000;

async function latencies(agent: http.Agent, url: URL, headers: Record<string, string>, expectDevices: number): Promise<number[]> {
  const deadline = Date.now() + ROUND_MS;
  const ms: number[] = [];
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < deadline) {
        const t = process.hrtime.bigint();
        const text = expectOk(await request(agent, url, 'GET', headers), 'device list');
        ms.push(Number(process.hrtime.bigint() - t) / 1e6);
        const listed = (JSON.parse(text) as { devices: unknown[] }).devices.length;
        if (listed !== expectDevices) throw new Error(`listed ${listed} devices, not ${expectDevices}`);
      }
    }),
  );
  return ms;
}

const line = (what: string, ms: number[]) => {
  const [p50, p99] = quantiles(ms, [0.5, 0.99]);
  return `${what}: ${ms.length} calls, p50 ${p50!.toFixed(1)} ms, p99 ${p99!.toFixed(1)} ms`;
};

export async function benchRemoteDevices(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const started = await startBenchService('remote', undefined, { remoteLimits: { pingIntervalMs: 1000, sweepIntervalMs: 500 } });
  const lines: string[] = [];
  try {
    const { service } = started;
    const api = service.apiUrl!;
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchremote', 'Bench remote devices');
    const list = new URL(`/v1/api/${projectId}/devices`, api);
    const headers = { ...JSON_HEADERS, 'x-jwt-token': token };

    const child = fork(new URL('./remoteDevicesClient.ts', import.meta.url), [service.remoteMgmtUrl!, apiKey, String(DEVICES), String(PING_MS)], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
    const message = <T>(kind: string) => new Promise<T>((resolve, reject) => {
      child.on('message', (m: { kind: string }) => m.kind === kind && resolve(m as T));
      child.once('exit', (code) => reject(new Error(`the devices exited with ${code}`)));
    });
    const { connectSeconds } = await message<{ connectSeconds: number }>('connected');
    lines.push(`${DEVICES} devices connected in ${connectSeconds.toFixed(2)} s (${(DEVICES / connectSeconds).toFixed(0)} hellos/s, 50 at a time)`);
    // The read models have the hellos before the list is timed.
    await sleep(1000);
    const during = await latencies(agent, list, headers, DEVICES);
    child.send({ kind: 'report' });
    const report = await message<{ pongs: number; closedEarly: number; open: number }>('report');
    lines.push(line(`GET devices while ${DEVICES} devices are connected and ping every ${PING_MS} ms (${CONNECTIONS} connections)`, during));
    lines.push(`devices still open: ${report.open}/${DEVICES}, closed by the server: ${report.closedEarly}, pongs received: ${report.pongs}; sockets held: ${service.remote?.registry?.size}`);

    const cut = Date.now();
    child.kill('SIGKILL');
    // Until the list shows every device disconnected: the events are in the log and the read model has them.
    let connected = DEVICES;
    for (let i = 0; i < 300 && connected > 0; i++) {
      await sleep(100);
      const text = expectOk(await request(agent, list, 'GET', headers), 'device list');
      connected = (JSON.parse(text) as { devices: { remote_mgmt_connected: boolean }[] }).devices.filter((d) => d.remote_mgmt_connected).length;
    }
    lines.push(`after the devices' process was killed: ${DEVICES - connected} of ${DEVICES} listed disconnected within ${((Date.now() - cut) / 1000).toFixed(2)} s`);
    await sleep(1000);
    const after = await latencies(agent, list, headers, DEVICES);
    lines.push(line(`GET devices with the same ${DEVICES} devices listed, none connected`, after));
  } finally {
    agent.destroy();
    await started.stop();
  }
  return { name: 'remoteDevices: 1,000 devices on the remote-management websocket of one process, and the device list meanwhile', lines };
}
