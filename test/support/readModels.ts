import type { RunningService } from '../../main';

/**
 * Waits until the service's read models have applied every event in the log so far. The ingestion
 * API answers once a sample's event is durable, not once the read models show it, so a
 * test that ingests and then reads through the management API waits here in between.
 */
export async function readModelsCaughtUp(service: Pick<RunningService, 'stores' | 'readModels'>, timeoutMs = 10_000): Promise<void> {
  const head = await service.stores.events.headPosition();
  if (head === undefined) return;
  if (!(await service.readModels.waitFor(head, timeoutMs))) throw new Error(`the read models did not apply the log up to ${head} within ${timeoutMs} ms`);
}
