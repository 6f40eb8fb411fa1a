// A device on the remote-management websocket, as the tests drive it: frames in and out, and how
// the socket ended.
import WebSocket from 'ws';

export interface TestDevice {
  ws: WebSocket;
  /** The next frame the server sends, parsed (rejects when the socket ends first). */
  next(timeoutMs?: number): Promise<Record<string, unknown>>;
  send(frame: unknown): void;
  /** How the socket ended. */
  closed: Promise<{ code: number; reason: string }>;
}

export async function connectDevice(url: string, options: { autoPong?: boolean } = {}): Promise<TestDevice> {
  const ws = new WebSocket(url, { autoPong: options.autoPong ?? true });
  const frames: Record<string, unknown>[] = [];
  const waiting: ((frame: Record<string, unknown> | undefined) => void)[] = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Record<string, unknown>;
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else frames.push(frame);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      for (const waiter of waiting.splice(0)) waiter(undefined);
      resolve({ code, reason: String(reason) });
    }),
  );
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
    ws.once('error', reject);
  });
  return {
    ws,
    closed,
    send: (frame) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    next: (timeoutMs = 10_000) => {
      const frame = frames.shift();
      if (frame) return Promise.resolve(frame);
      if (ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error('the socket has ended'));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no frame in time')), timeoutMs);
        waiting.push((f) => {
          clearTimeout(timer);
          if (f) resolve(f);
          else reject(new Error('the socket ended before a frame came'));
        });
      });
    },
  };
}

/** The hello the official library (version 4, ingestion mode) sends from a Linux device with a camera. */
export function linuxHello(apiKey: string, deviceId: string, overrides: Record<string, unknown> = {}): { hello: Record<string, unknown> } {
  return {
    hello: {
      version: 4,
      apiKey,
      deviceId,
      deviceType: 'LINUX_X86',
      connection: 'ip',
      sensors: [
        { name: 'Microphone', maxSampleLengthS: 3600, frequencies: [16000] },
        { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] },
      ],
      supportsSnapshotStreaming: true,
      mode: 'ingestion',
      ...overrides,
    },
  };
}
