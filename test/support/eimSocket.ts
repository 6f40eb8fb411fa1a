// A client of the .eim protocol server on a Unix socket: it writes lines and reads answer lines.
import { connect } from 'node:net';

/** Writes `text` to the socket at `socketPath`; resolves with what came back once it holds `count` whole answer lines. */
export function eimReceived(socketPath: string, text: string, count = 1): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.split('\n').filter((l) => l !== '').length >= count && received.endsWith('\n')) {
        socket.end();
        resolve(received);
      }
    });
    socket.on('error', reject);
    socket.write(text);
  });
}

/** As eimReceived, the answer lines parsed. */
export async function eimExchange(socketPath: string, text: string, count = 1): Promise<Record<string, unknown>[]> {
  return (await eimReceived(socketPath, text, count))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
