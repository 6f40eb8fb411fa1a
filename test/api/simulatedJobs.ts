// Jobs simulated by appending their stream's events to the service's event store, as a worker
// does: category key 'simulated' has no runner, so the service's own worker leaves them alone.
import { randomUUID } from 'node:crypto';
import { jobStream, type JobOutputLine } from '../../domain/job/jobEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { SdkSocket } from './socketClient';

const metadata = () => ({ actor: 'system:test', correlationId: 'socket-test', time: new Date().toISOString() });
const event = (type: string, data: Record<string, unknown>) => ({ id: randomUUID(), type, data, metadata: metadata() });

let nextJobId = 5000;

/** An id no job has. */
export const unusedJobId = (): number => nextJobId++;

/** A project's job (a number), or an organization's. */
export async function requestJob(events: EventStore, scope: number | { organizationId: number }): Promise<number> {
  const jobId = nextJobId++;
  const owner = typeof scope === 'number' ? { projectId: scope, organizationId: null } : { projectId: null, organizationId: scope.organizationId };
  await events.appendToStream(
    jobStream(jobId),
    [
      event('JobRequested', {
        jobId,
        ...owner,
        category: 'Generate features',
        categoryKey: 'simulated',
        key: '3',
        parameters: {},
        jobNotificationUids: [],
        createdByUserId: null,
        created: new Date().toISOString(),
      }),
    ],
    'no_stream',
  );
  return jobId;
}

export const line = (data: string, created = new Date()): JobOutputLine => ({ created: created.toISOString(), data, logLevel: 'info' });

export const writeOutput = (events: EventStore, jobId: number, lines: JobOutputLine[]) =>
  events.appendToStream(jobStream(jobId), [event('JobOutputWritten', { jobId, lines })], 'stream_exists');

export const finish = (events: EventStore, jobId: number, finishedSuccessful: boolean) =>
  events.appendToStream(
    jobStream(jobId),
    [event('JobFinished', { jobId, finishedSuccessful, reason: finishedSuccessful ? null : 'failed', cancelled: false, computeTimeMs: 12, finished: new Date().toISOString() })],
    'stream_exists',
  );

export const dataOf = (socket: SdkSocket, jobId: number) => socket.named(`job-data-${jobId}`).map((m) => m.payload.data);
