// Run as a process of its own (`node --import tsx test/api/socketLogWriter.ts <dataDir> <jobId> <lines>`):
// appends a job's output, one line per event, and its successful end to the event log of a data
// folder, as a job worker in another process does. The job websocket tests check that a socket
// served by the test's process sees these lines.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { jobStream } from '../../domain/job/jobEvents';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const [dataDir, jobIdText, linesText] = process.argv.slice(2);
const jobId = Number(jobIdText);
const count = Number(linesText);
const store = SqliteEventStore.open(path.join(dataDir!, 'events.sqlite'));
const metadata = () => ({ actor: 'system:test-worker', correlationId: `pid-${process.pid}`, time: new Date().toISOString() });
for (let i = 0; i < count; i++) {
  const line = { created: new Date().toISOString(), data: `line ${i} from process ${process.pid}\n`, logLevel: 'info' };
  await store.appendToStream(jobStream(jobId), [{ id: randomUUID(), type: 'JobOutputWritten', data: { jobId, lines: [line] }, metadata: metadata() }], 'stream_exists');
  await new Promise((resolve) => setTimeout(resolve, 10));
}
const finished = { jobId, finishedSuccessful: true, reason: null, cancelled: false, computeTimeMs: 5, finished: new Date().toISOString() };
await store.appendToStream(jobStream(jobId), [{ id: randomUUID(), type: 'JobFinished', data: finished, metadata: metadata() }], 'stream_exists');
await store.close();
console.log(`appended ${count} lines to ${jobStream(jobId)}`);
