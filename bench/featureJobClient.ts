// The load generator of bench/featureJob.ts, in its own process as real clients are: on
// `{kind:'run'}` it keeps CONNECTIONS keep-alive connections calling GET /v1/api/{projectId} (or the
// setup's `path`), one
// request in flight on each, until `{kind:'stop'}`; then it answers every call's latency (ms) and
// how many failed. Every answer is checked (200 and a success envelope).
import http from 'node:http';

export interface LoadSetup {
  apiUrl: string;
  projectId: number;
  token: string;
  connections: number;
  /** What to GET instead of /v1/api/{projectId}. */
  path?: string;
}
export type LoadCommand = { kind: 'run' } | { kind: 'stop' } | { kind: 'exit' };
export type LoadMessage = { kind: 'ready' } | { kind: 'running' } | { kind: 'result'; latencies: number[]; failures: number; firstFailure: string };

const OK_PREFIX = '{"success":true';
const send = (message: LoadMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));

let setup: LoadSetup | undefined;
let agent: http.Agent | undefined;
let stopping = false;
let running: Promise<void> | undefined;
let latencies: number[] = [];
let failures = 0;
let firstFailure = '';

function get(): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(setup!.path ?? `/v1/api/${setup!.projectId}`, setup!.apiUrl), { method: 'GET', agent, headers: { 'x-jwt-token': setup!.token } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function loop(): Promise<void> {
  while (!stopping) {
    const t = process.hrtime.bigint();
    try {
      const reply = await get();
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (reply.status !== 200 || !reply.text.startsWith(OK_PREFIX)) {
        failures += 1;
        firstFailure ||= `${reply.status}: ${reply.text.slice(0, 200)}`;
      }
    } catch (error) {
      failures += 1;
      firstFailure ||= String(error);
    }
  }
}

process.on('message', (message: LoadSetup | LoadCommand) => {
  if (!('kind' in message)) {
    setup = message;
    agent = new http.Agent({ keepAlive: true, maxSockets: message.connections });
    void send({ kind: 'ready' });
    return;
  }
  switch (message.kind) {
    case 'run':
      stopping = false;
      latencies = [];
      failures = 0;
      firstFailure = '';
      running = Promise.all(Array.from({ length: setup!.connections }, loop)).then(() => undefined);
      void send({ kind: 'running' });
      break;
    case 'stop':
      stopping = true;
      void running!.then(() => send({ kind: 'result', latencies, failures, firstFailure }));
      break;
    case 'exit':
      agent?.destroy();
      process.exit(0);
  }
});
