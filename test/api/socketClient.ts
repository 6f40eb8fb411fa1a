// A job websocket client that does exactly what the SDK's runJobUntilCompletion does
// (edge-impulse-api build/library/api.js): a plain `ws` websocket on
// `/socket.io/?token=...&EIO=3&transport=websocket&onDemandLogs=true`, frames parsed by stripping
// the leading digits and JSON-parsing the rest, only arrays counted as messages.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import WebSocket from 'ws';

export interface SdkMessage {
  name: string;
  payload: Record<string, unknown>;
}

export class SdkSocket {
  /** Every text frame as received, in order. */
  readonly frames: string[] = [];
  /** The frames the SDK would read as messages: `[name, payload]` arrays. */
  readonly messages: SdkMessage[] = [];
  closed = false;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => {
      const text = data.toString();
      this.frames.push(text);
      try {
        const m: unknown = JSON.parse(text.replace(/^[0-9]+/, ''));
        if (Array.isArray(m) && typeof m[0] === 'string') this.messages.push({ name: m[0], payload: m[1] as Record<string, unknown> });
      } catch {
        // not JSON: the SDK ignores it too
      }
      this.notify();
    });
    ws.on('close', () => {
      this.closed = true;
      this.notify();
    });
  }

  static url(apiUrl: string, token: string): string {
    return `${apiUrl.replace('http', 'ws')}/socket.io/?token=${token}&EIO=3&transport=websocket&onDemandLogs=true`;
  }

  /** Opens the socket; rejects with the HTTP status when the handshake is refused. */
  static open(apiUrl: string, token: string): Promise<SdkSocket> {
    const ws = new WebSocket(SdkSocket.url(apiUrl, token));
    const socket = new SdkSocket(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(socket));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => {
          reject(new Error(`handshake refused: ${res.statusCode} ${body}`));
          ws.terminate();
        });
      });
      ws.once('error', reject);
    });
  }

  /** Opens the socket, adds it to `open` (for the test's afterAll to close) and waits for its hello. */
  static async greeted(apiUrl: string, token: string, open: SdkSocket[]): Promise<SdkSocket> {
    const socket = await SdkSocket.open(apiUrl, token);
    open.push(socket);
    await socket.hello();
    return socket;
  }

  /** Resolves once the server's hello has come. */
  hello(): Promise<void> {
    return this.until(() => this.named('hello').length > 0, 'hello');
  }

  send(text: string): void {
    this.ws.send(text);
  }

  /** `42["start-log-stream",{jobId,lastReceivedTimestamp}]`, as the SDK sends it. */
  startLogStream(jobId: number, lastReceivedTimestamp: number | string = 0): void {
    this.send('42' + JSON.stringify(['start-log-stream', { jobId, lastReceivedTimestamp }]));
  }

  named(name: string): SdkMessage[] {
    return this.messages.filter((m) => m.name === name);
  }

  /** Resolves once `done()` holds, checked at every frame; rejects after `timeoutMs`. */
  until(done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${this.frames.length} frames, last: ${this.frames.slice(-3).join(' | ')}`)), timeoutMs);
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  close(): void {
    this.ws.terminate();
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }
}

/**
 * A client that opens the websocket, asks for a job's output and then reads nothing at all: its
 * TCP socket is never read, so the kernel's buffers fill and the server's writes back up. (A `ws`
 * client cannot play this part: it resumes a paused socket itself.)
 */
export function stalledClient(apiUrl: string, token: string, jobId: number): Promise<net.Socket> {
  const { hostname, port } = new URL(apiUrl);
  const tcp = net.connect(Number(port), hostname);
  const message = Buffer.from('42' + JSON.stringify(['start-log-stream', { jobId, lastReceivedTimestamp: 0 }]));
  if (message.length >= 126) throw new Error('one short frame only');
  // A client's frame is masked (RFC 6455 5.3).
  const mask = randomBytes(4);
  const frame = Buffer.concat([Buffer.from([0x81, 0x80 | message.length]), mask, Buffer.from(message.map((b, i) => b ^ mask[i % 4]!))]);
  return new Promise((resolve, reject) => {
    tcp.once('error', reject);
    tcp.once('connect', () => {
      tcp.write(
        `GET /socket.io/?token=${token}&EIO=3&transport=websocket&onDemandLogs=true HTTP/1.1\r\n` +
          `Host: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      // Sent once the server has had time to answer the upgrade; nothing is ever read.
      setTimeout(() => tcp.write(frame, () => resolve(tcp)), 200);
    });
  });
}
