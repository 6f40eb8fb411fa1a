// Simulated devices on the remote-management socket, in a process of their own as real devices are:
// each opens a websocket, says a version-4 hello as the official device library does
// (docs/remote-management.md), waits for `hello: true`, then pings on its own timer as the library
// does (every 30 s there; the bench chooses) and times each pong. The parent asks for the figures.
import { fork, type ChildProcess } from 'node:child_process';
import WebSocket from 'ws';

export interface SwarmSetup {
  url: string;
  apiKey: string;
  devices: number;
  /** Hellos in flight at once while connecting. */
  connectConcurrency: number;
  /** Each device pings once per this period, the devices spread evenly over it. */
  pingEveryMs: number;
}

export interface SwarmFigures {
  connected: number;
  /** Seconds from the first connection to the last `hello: true`. */
  connectSeconds: number;
  /** Each hello's round trip (open to `hello: true`), ms. */
  helloMs: number[];
  /** Pong round trips since the last `figures` request, ms. */
  pongMs: number[];
  /** Pings sent since the last request that had no pong before the next ping. */
  missedPongs: number;
  /** Sockets the server closed or that failed, since the start. */
  closed: number;
  refused: string[];
}

type Command = { kind: 'connect'; setup: SwarmSetup } | { kind: 'figures' } | { kind: 'exit' };
type Message = { kind: 'connected'; figures: SwarmFigures } | { kind: 'figures'; figures: SwarmFigures } | { kind: 'error'; error: string };

export interface Swarm {
  /** Connects every device; resolves once each has its `hello: true` (or was refused). */
  connect(setup: SwarmSetup): Promise<SwarmFigures>;
  figures(): Promise<SwarmFigures>;
  /** Kills the devices' process (SIGKILL): every connection is cut at once, as a lost network would. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSwarm(): Promise<Swarm> {
  const child: ChildProcess = fork(new URL('./deviceSwarm.ts', import.meta.url), ['--child'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ask = (command: Command) => {
    const answer = Promise.race([
      new Promise<Message>((resolve) => child.once('message', (m: Message) => resolve(m))),
      exited.then((code) => Promise.reject(new Error(`the device swarm exited with ${code}`))),
    ]).then((m) => (m.kind === 'error' ? Promise.reject(new Error(`device swarm: ${m.error}`)) : m.figures));
    child.send(command);
    return answer;
  };
  return {
    connect: (setup) => ask({ kind: 'connect', setup }),
    figures: () => ask({ kind: 'figures' }),
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ kind: 'exit' });
      await exited;
    },
  };
}

// --- the child ---------------------------------------------------------------------------------

function hello(apiKey: string, n: number): string {
  return JSON.stringify({
    hello: {
      version: 4,
      apiKey,
      deviceId: `swarm-${String(n).padStart(5, '0')}`,
      deviceType: 'BENCH_LINUX',
      connection: 'ip',
      sensors: [
        { name: 'Microphone', maxSampleLengthS: 3600, frequencies: [16000] },
        { name: 'Camera (320x240)', maxSampleLengthS: 60000, frequencies: [] },
      ],
      supportsSnapshotStreaming: true,
      mode: 'ingestion',
    },
  });
}

function runChild(): void {
  const sockets: WebSocket[] = [];
  const timers: NodeJS.Timeout[] = [];
  let pongMs: number[] = [];
  let missedPongs = 0;
  let closed = 0;
  const refused: string[] = [];
  const helloMs: number[] = [];
  let connectSeconds = 0;
  const figures = (): SwarmFigures => {
    const out = { connected: sockets.filter((s) => s.readyState === WebSocket.OPEN).length, connectSeconds, helloMs, pongMs, missedPongs, closed, refused };
    pongMs = [];
    missedPongs = 0;
    return out;
  };
  const reply = (m: Message) => process.send!(m);

  const connectOne = (setup: SwarmSetup, n: number) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const socket = new WebSocket(setup.url);
      let answered = false;
      const done = () => {
        if (answered) return;
        answered = true;
        resolve();
      };
      socket.on('open', () => socket.send(hello(setup.apiKey, n)));
      socket.once('message', (data: WebSocket.RawData) => {
        const answer = JSON.parse(data.toString()) as { hello?: boolean; err?: string };
        if (answer.hello === true) {
          helloMs.push(performance.now() - started);
          sockets.push(socket);
        } else refused.push(answer.err ?? 'no reason');
        done();
      });
      socket.on('error', (error) => {
        refused.push(error.message);
        done();
      });
      socket.on('close', () => {
        closed++;
        done();
      });
    });

  const startPinging = (setup: SwarmSetup) => {
    sockets.forEach((socket, i) => {
      let pending: number | undefined;
      socket.on('pong', () => {
        if (pending === undefined) return;
        pongMs.push(performance.now() - pending);
        pending = undefined;
      });
      const ping = () => {
        if (socket.readyState !== WebSocket.OPEN) return;
        if (pending !== undefined) missedPongs++;
        pending = performance.now();
        socket.ping();
      };
      // Spread evenly over the period, as independent devices' timers are.
      const offset = (setup.pingEveryMs * i) / sockets.length;
      timers.push(
        setTimeout(() => {
          ping();
          timers.push(setInterval(ping, setup.pingEveryMs));
        }, offset),
      );
    });
  };

  process.on('message', (command: Command) => {
    (async () => {
      if (command.kind === 'connect') {
        const { setup } = command;
        const started = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: setup.connectConcurrency }, async () => {
            for (let n = next++; n < setup.devices; n = next++) await connectOne(setup, n);
          }),
        );
        connectSeconds = (performance.now() - started) / 1000;
        startPinging(setup);
        reply({ kind: 'connected', figures: figures() });
      } else if (command.kind === 'figures') {
        reply({ kind: 'figures', figures: figures() });
      } else {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.terminate();
        process.exit(0);
      }
    })().catch((error: unknown) => reply({ kind: 'error', error: error instanceof Error ? error.message : String(error) }));
  });
}

if (process.argv.includes('--child') && process.send) runChild();
