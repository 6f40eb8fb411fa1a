// The .eim's socket server: listens on the Unix socket path the Linux runner passes as the only
// argument, reads newline-delimited JSON and answers each line in order (eimProtocol.ts). Bundled
// into the .eim by esbuild (eimMain.ts); the service never runs it itself but in tests.
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { answerEimLine, eimLine, type EimProject, type EimRunner, type EimSpecView } from '../../domain/deployment/eimProtocol';

/** A line longer than this is refused unread: a window of millions of values is no window of ours. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

function serveConnection(socket: Socket, answer: (line: string) => Promise<Record<string, unknown>>): void {
  let pending = '';
  let skipping = false;
  // Answers go out in the order the lines came in.
  let queue: Promise<void> = Promise.resolve();
  const reply = (line: string) => {
    queue = queue.then(async () => {
      const response = await answer(line);
      if (!socket.destroyed) socket.write(eimLine(response));
    });
  };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (skipping) {
        skipping = false;
        continue;
      }
      if (line.trim() !== '') reply(line);
    }
    if (pending.length > MAX_LINE_BYTES) {
      pending = '';
      if (!skipping) {
        skipping = true;
        queue = queue.then(() => {
          if (!socket.destroyed) socket.write(eimLine({ success: false, error: `A line of more than ${MAX_LINE_BYTES} bytes: refused` }));
        });
      }
    }
  });
  socket.on('error', () => socket.destroy());
}

/** Serves the impulse on `socketPath` (a stale socket file there is replaced) until closed. */
export async function serveEim(socketPath: string, spec: EimSpecView, runner: EimRunner, project: EimProject): Promise<Server> {
  rmSync(socketPath, { force: true });
  const server = createServer((socket) => serveConnection(socket, (line) => answerEimLine(line, spec, runner, project)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
