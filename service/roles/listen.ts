// Opening a port for the api and ingestion roles.
import type http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';

/** Listens on `port` (0: one the system picks) and answers the port listened on. */
export function listen(server: http.Server | https.Server, port: number, host: string, log: Logger): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // A listening server reports failed accepts (EMFILE: a client opening connections without end)
      // as 'error' events, which would stop the process if nothing listened. Node goes on accepting.
      server.on('error', (error) => log.error({ err: error, port }, 'the server could not accept a connection'));
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** How the service names a port it listens on, in its logs and to its callers. */
export const localUrl = (scheme: string, port: number): string => `${scheme}://127.0.0.1:${port}`;
