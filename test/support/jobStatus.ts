// Following a job over the management API until it ends.
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestService } from './testService';

type Answer = { body: Record<string, unknown> };

/**
 * Polls GET jobs/{jobId}/status (through `get`, the project's GET) until the job has finished, then
 * waits for every read model to reach the log's head (the result is recorded before the job ends).
 * Its status; throws after `timeoutMs`.
 */
export async function jobFinished<J extends { finishedSuccessful?: boolean } = { finishedSuccessful?: boolean }>(
  service: Pick<TestService, 'projections' | 'stores'>,
  get: (path: string) => Promise<Answer>,
  jobId: number,
  timeoutMs = 120_000,
): Promise<J> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { job } = (await get(`/jobs/${jobId}/status`)).body as { job: J };
    if (job.finishedSuccessful !== undefined) {
      await service.projections!.waitFor((await service.stores.events.headPosition())!, 5000);
      return job;
    }
    if (Date.now() > end) throw new Error(`job ${jobId} did not finish`);
    await sleep(100);
  }
}
