// The simulated devices of bench/remoteDevices.ts, in a process of their own: DEVICES websockets
// that say a version 4 hello as the official library does and ping the server every PING_MS (the
// library pings every 30 s; pinging more often puts more load on the server). Reports over IPC.
import WebSocket from 'ws';

const [url, apiKey, countText, pingMsText] = process.argv.slice(2);
const count = Number(countText);
const pingMs = Number(pingMsText);
const sockets: WebSocket[] = [];
let pongs = 0;
let closedEarly = 0;

function device(i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url!);
    ws.once('error', reject);
    ws.once('open', () => {
      ws.once('message', (data) => {
        const reply = JSON.parse(String(data)) as { hello?: boolean; err?: string };
        if (reply.hello !== true) return reject(new Error(`hello refused: ${reply.err}`));
        ws.on('close', () => closedEarly++);
        ws.on('pong', () => pongs++);
        sockets.push(ws);
        resolve();
      });
      ws.send(
        JSON.stringify({
          hello: {
            version: 4, apiKey, deviceId: `bench-device-${i}`, deviceType: 'LINUX_X86', connection: 'ip', mode: 'ingestion', supportsSnapshotStreaming: true,
            sensors: [{ name: 'Microphone', maxSampleLengthS: 3600, frequencies: [16000] }, { name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] }],
          },
        }),
      );
    });
  });
}

const started = process.hrtime.bigint();
// 50 hellos in flight at once, as devices coming back after an outage would.
let next = 0;
await Promise.all(
  Array.from({ length: 50 }, async () => {
    for (let i = next++; i < count; i = next++) await device(i);
  }),
);
const connectSeconds = Number(process.hrtime.bigint() - started) / 1e9;
setInterval(() => {
  for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.ping();
}, pingMs);
process.send!({ kind: 'connected', connectSeconds });
process.on('message', (m: { kind: string }) => {
  if (m.kind === 'report') process.send!({ kind: 'report', pongs, closedEarly, open: sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length });
});
