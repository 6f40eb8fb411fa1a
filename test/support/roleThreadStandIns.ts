// A stand-in for service/roles/roleThreadWorker.ts in test/service/roleThread.int.spec.ts: a thread
// whose roles cannot start (a data folder named `...fails-to-start`), or one that says they started
// and then fails.
import { parentPort, workerData } from 'node:worker_threads';
import type { RoleThreadMessage } from '../../service/roles/roleThread';

const port = parentPort!;
const tell = (message: RoleThreadMessage) => port.postMessage(message);
const { config } = (workerData as { roleThread: { config: { dataDir: string } } }).roleThread;
if (config.dataDir.endsWith('fails-to-start')) {
  tell({ kind: 'failed', message: 'the stand-in cannot start' });
  port.close();
} else {
  tell({ kind: 'started' });
  setTimeout(() => {
    throw new Error('the stand-in thread failed while running');
  }, 50);
}
