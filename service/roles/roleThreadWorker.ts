// The roles of THREAD_ROLES on a worker thread of the service's process, started by
// service/roles/roleThread.ts: the service of those roles alone, on the same data folder, as a process
// of ROLES split would run them. It answers the thread that started it with a RoleThreadMessage.
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { ServiceStartStopped, startService, type RunningService } from '../../main';
import type { Config } from '../configuration';
import type { RoleThreadMessage } from './roleThread';

const { config } = workerData as { config: Config };
const port = parentPort!;
const log = pino({ level: config.logLevel }).child({ thread: [...config.roles].join(',') });
const tell = (message: RoleThreadMessage) => port.postMessage(message);
const text = (error: unknown) => (error instanceof Error ? error.message : String(error));

let service: RunningService | undefined;
// A stop asked for while the roles start (a catch-up) ends the start, in order.
const starting = new AbortController();

port.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  if (!service) {
    starting.abort();
    return;
  }
  service.stop().then(
    () => (tell({ kind: 'stopped' }), port.close()),
    (error: unknown) => (tell({ kind: 'stop-failed', message: text(error) }), port.close()),
  );
});

try {
  service = await startService(config, log, { signal: starting.signal, announceApplied: true });
  tell({ kind: 'started' });
} catch (error) {
  if (error instanceof ServiceStartStopped) tell({ kind: 'stopped' });
  else {
    log.error({ err: error }, 'the roles of this thread could not start');
    tell({ kind: 'failed', message: text(error) });
  }
  port.close();
}
