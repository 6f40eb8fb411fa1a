import { sampleDecider } from '../../domain/sample/sampleDecider';
import type { CheckedSample } from '../../domain/sample/checkSample';
import { sampleStream } from '../../domain/sample/sampleEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import type { UniquenessReservations } from '../uniqueness';

/**
 * Content refused as a duplicate (x-disallow-duplicates) is reserved per project, owned by the
 * sample that holds it, so two ingestion processes cannot both take it; deleting the sample frees it.
 */
export const SAMPLE_CONTENT = 'sample-content';
export const sampleContentValue = (projectId: number, sha256: string): string => `${projectId}:${sha256}`;

/** Records a sample whose file is already durable in the blob store: the acknowledgement point. */
export async function ingestSample(
  deps: { events: EventStore; ids: IdAllocator },
  sample: CheckedSample,
  ctx: CommandContext,
  reservedSampleId?: number,
): Promise<{ sampleId: number; position: Position }> {
  const sampleId = reservedSampleId ?? (await deps.ids.next('sample'));
  // An id just allocated (here or by the caller) has no stream yet: one read less on the devices' path.
  const { appended } = await handleCommand(
    deps.events,
    sampleStream(sampleId),
    sampleDecider,
    { type: 'IngestSample', data: { ...sample, sampleId, ingested: ctx.now.toISOString() } },
    ctx,
    { newStream: true },
  );
  return { sampleId, position: appended!.position };
}

export async function deleteSample(
  deps: { events: EventStore; reservations: UniquenessReservations },
  sampleId: number,
  ctx: CommandContext,
): Promise<Position | undefined> {
  const { appended, state } = await handleCommand(deps.events, sampleStream(sampleId), sampleDecider, { type: 'DeleteSample', data: { now: ctx.now } }, ctx);
  // A deleted sample no longer counts as a duplicate; a no-op unless this sample held its content.
  if (state.status === 'deleted') await deps.reservations.release(SAMPLE_CONTENT, sampleContentValue(state.projectId, state.sha256), sampleStream(sampleId), ctx);
  return appended?.position;
}
