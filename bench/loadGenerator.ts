// The HTTP load generator of the throughput benchmarks, in its own process as real clients are (an
// in-process client takes event-loop time from the service it measures). The parent names its
// targets once, then asks for timed rounds on one target at a time: CONNECTIONS keep-alive
// connections, one request in flight on each, until the round's time is up. Every answer is checked
// (a failing service must not look fast) and timed. Small signed samples are made and signed here,
// a new one for every request, so the signing costs the client, not the service.
import { fork, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { readReply, request, type Reply } from './httpRequest';

export type LoadTarget =
  /**
   * GET `url`; the answer must be 200 and start with `{"success":true`. With `uniqueParameter`, each
   * call adds that query parameter with a value no call repeats: no answer kept for a URL serves it.
   */
  | { name: string; kind: 'get'; url: string; headers: Record<string, string>; uniqueParameter?: string }
  /** POST a new small signed JSON sample to `url` (`/api/training/data`); the answer must be its file name. */
  | { name: string; kind: 'data'; url: string; apiKey: string; hmacKey: string };

export interface RoundResult {
  target: string;
  ops: number;
  seconds: number;
  /** Each call's latency, ms. */
  latencies: number[];
  failures: number;
  firstFailure: string;
  /**
   * CPU seconds the calling process (the one serving the target: the service or the bare server)
   * spent during the round. Per call, it holds up better than a rate on a machine shared with
   * other work, which slows the wall clock but not the work a call costs.
   */
  hostCpuSeconds: number;
  /**
   * CPU seconds the load generator itself spent during the round: near the round's seconds, its
   * one thread was saturated, and the target's rate is the generator's as much as its own.
   */
  generatorCpuSeconds: number;
}

/** One file sent as the only part (named "data") of a multipart body, streamed from disk. */
export interface Upload {
  url: string;
  apiKey: string;
  path: string;
  fileName: string;
  contentType: string;
}

export interface UploadResult {
  status: number;
  text: string;
  seconds: number;
}

type Command = { kind: 'setup'; targets: LoadTarget[]; connections: number } | { kind: 'round'; target: string; ms: number } | ({ kind: 'upload' } & Upload) | { kind: 'exit' };
type Message = { kind: 'ready' } | ({ kind: 'round' } & Omit<RoundResult, 'hostCpuSeconds'>) | ({ kind: 'uploaded' } & UploadResult) | { kind: 'error'; error: string };

const OK_PREFIX = '{"success":true';
const ROWS = 10;
const SENSORS = ['accX', 'accY', 'accZ'];

/** Forks the load generator; `round` runs one timed round on a named target. */
export async function startLoadGenerator(
  targets: LoadTarget[],
  connections: number,
): Promise<{ round(target: string, ms: number): Promise<RoundResult>; upload(upload: Upload): Promise<UploadResult>; stop(): Promise<void> }> {
  const child: ChildProcess = fork(new URL('./loadGenerator.ts', import.meta.url), ['--child'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const next = () =>
    Promise.race([
      new Promise<Message>((resolve) => child.once('message', (m: Message) => resolve(m))),
      exited.then((code) => Promise.reject(new Error(`the load generator exited with ${code}`))),
    ]).then((m) => (m.kind === 'error' ? Promise.reject(new Error(`load generator: ${m.error}`)) : m));
  const send = (c: Command) => child.send(c);
  let answer = next();
  send({ kind: 'setup', targets, connections });
  await answer;
  return {
    async round(target, ms) {
      answer = next();
      const cpu = process.cpuUsage();
      send({ kind: 'round', target, ms });
      const { kind: _, ...result } = (await answer) as Extract<Message, { kind: 'round' }>;
      const used = process.cpuUsage(cpu);
      return { ...result, hostCpuSeconds: (used.user + used.system) / 1e6 };
    },
    async upload(upload) {
      answer = next();
      send({ kind: 'upload', ...upload });
      const { kind: _, ...result } = (await answer) as Extract<Message, { kind: 'uploaded' }>;
      return result;
    },
    async stop() {
      if (child.exitCode !== null) return;
      send({ kind: 'exit' });
      await exited;
    },
  };
}

/**
 * `rounds` timed rounds of `ms` per contender, taking turns (the first rotating, so none always
 * follows the same neighbour); a round with a failed call stops the benchmark. Answers each
 * contender's rounds.
 */
export async function roundsInTurn(load: { round(target: string, ms: number): Promise<RoundResult> }, names: readonly string[], rounds: number, ms: number): Promise<Map<string, RoundResult[]>> {
  const results = new Map<string, RoundResult[]>(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      const r = await load.round(name, ms);
      if (r.failures > 0) throw new Error(`${name} failed ${r.failures} calls: ${r.firstFailure}`);
      results.get(name)!.push(r);
    }
  }
  return results;
}

/** A JSON sample signed as the device library signs it (sdk-reference 4.1); `n` makes it unique. */
export function smallSignedSample(hmacKey: string, n: number, iat = Math.floor(Date.now() / 1000)): string {
  const values = Array.from({ length: ROWS }, (_, row) => [n + row / 10, Math.round(Math.sin(n + row) * 1000) / 100, -row * 0.25]);
  const json = JSON.stringify({
    protected: { ver: 'v1', alg: 'HS256', iat },
    signature: '0'.repeat(64),
    payload: { device_name: 'bench-device', device_type: 'BENCH', interval_ms: 10, sensors: SENSORS.map((name) => ({ name, units: 'm/s2' })), values },
  });
  return json.replace('0'.repeat(64), createHmac('sha256', hmacKey).update(json).digest('hex'));
}

// --- the child ---------------------------------------------------------------------------------

/** The file as the one part of a multipart body, read from disk in 1 MiB chunks: never whole in memory. */
async function uploadFile(agent: http.Agent, upload: Upload): Promise<UploadResult> {
  const boundary = `----bench${randomUUID().replaceAll('-', '')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="${upload.fileName}"\r\nContent-Type: ${upload.contentType}\r\n\r\n`, 'latin1');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  const { size } = await stat(upload.path);
  const started = performance.now();
  const reply = await new Promise<Reply>((resolve, reject) => {
    const req = http.request(
      upload.url,
      { method: 'POST', agent, headers: { 'x-api-key': upload.apiKey, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) } },
      (res) => {
        readReply(res).then(resolve, reject);
      },
    );
    req.on('error', reject);
    pipeline(async function* () {
      yield head;
      for await (const chunk of createReadStream(upload.path, { highWaterMark: 1024 * 1024 })) yield chunk as Buffer;
      yield tail;
    }, req).catch(reject);
  });
  return { ...reply, seconds: (performance.now() - started) / 1000 };
}

function runChild(): void {
  let targets = new Map<string, LoadTarget>();
  let agent: http.Agent | undefined;
  let connections = 0;
  // Unique across rounds and targets: every sample is new content.
  let sent = 0;
  const reply = (m: Message) => process.send!(m);

  /** One request; answers an error text when the answer is not the expected one. */
  const once = async (target: LoadTarget): Promise<string | undefined> => {
    if (target.kind === 'get') {
      const url = target.uniqueParameter === undefined ? target.url : `${target.url}${target.url.includes('?') ? '&' : '?'}${target.uniqueParameter}=${sent++}`;
      const r = await request(agent!, url, 'GET', target.headers);
      return r.status === 200 && r.text.startsWith(OK_PREFIX) ? undefined : `${r.status}: ${r.text.slice(0, 200)}`;
    }
    const n = sent++;
    const fileName = `idle.${process.pid}.${n}.json`;
    const r = await request(agent!, target.url, 'POST', { 'x-api-key': target.apiKey, 'content-type': 'application/json', 'x-file-name': fileName }, smallSignedSample(target.hmacKey, n));
    return r.status === 200 && r.text === fileName ? undefined : `${r.status}: ${r.text.slice(0, 200)}`;
  };

  const round = async (target: LoadTarget, ms: number): Promise<Omit<RoundResult, 'hostCpuSeconds'>> => {
    const latencies: number[] = [];
    let failures = 0;
    let firstFailure = '';
    const cpu = process.cpuUsage();
    const start = performance.now();
    const deadline = start + ms;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < deadline) {
          const t = performance.now();
          let failure: string | undefined;
          try {
            failure = await once(target);
          } catch (error) {
            failure = String(error);
          }
          latencies.push(performance.now() - t);
          if (failure !== undefined) {
            failures += 1;
            firstFailure ||= failure;
          }
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { target: target.name, ops: latencies.length, seconds: (performance.now() - start) / 1000, latencies, failures, firstFailure, generatorCpuSeconds: (used.user + used.system) / 1e6 };
  };

  // A parent gone without saying so (a crash) leaves no load generator behind.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (command: Command) => {
    switch (command.kind) {
      case 'setup':
        targets = new Map(command.targets.map((t) => [t.name, t]));
        connections = command.connections;
        agent = new http.Agent({ keepAlive: true, maxSockets: connections });
        reply({ kind: 'ready' });
        break;
      case 'round': {
        const target = targets.get(command.target);
        if (!target) return reply({ kind: 'error', error: `no target named ${command.target}` });
        round(target, command.ms).then(
          (result) => reply({ kind: 'round', ...result }),
          (error: unknown) => reply({ kind: 'error', error: String(error) }),
        );
        break;
      }
      case 'upload':
        uploadFile(agent!, command).then(
          (result) => reply({ kind: 'uploaded', ...result }),
          (error: unknown) => reply({ kind: 'error', error: String(error) }),
        );
        break;
      case 'exit':
        agent?.destroy();
        process.exit(0);
    }
  });
}

if (process.argv.includes('--child') && process.send) runChild();
