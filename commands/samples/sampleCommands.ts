import { sampleDecider } from '../../domain/sample/sampleDecider';
import { sampleStream, type SampleIngested } from '../../domain/sample/sampleEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';

/** Records a sample whose file is already durable in the blob store: the acknowledgement point. */
export async function ingestSample(
  deps: { events: EventStore; ids: IdAllocator },
  sample: Omit<SampleIngested['data'], 'sampleId' | 'ingested'>,
  ctx: CommandContext,
): Promise<{ sampleId: number; position: Position }> {
  const sampleId = await deps.ids.next('sample');
  const { appended } = await handleCommand(
    deps.events,
    sampleStream(sampleId),
    sampleDecider,
    { type: 'IngestSample', data: { ...sample, sampleId, ingested: ctx.now.toISOString() } },
    ctx,
  );
  return { sampleId, position: appended!.position };
}

export async function deleteSample(events: EventStore, sampleId: number, ctx: CommandContext): Promise<Position | undefined> {
  const { appended } = await handleCommand(events, sampleStream(sampleId), sampleDecider, { type: 'DeleteSample', data: { now: ctx.now } }, ctx);
  return appended?.position;
}
