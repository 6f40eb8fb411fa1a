import { tunerRunDecider } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream } from '../../domain/optimize/tunerRunEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';

/** Renames a tuner run; the position to settle on (none when the name was already this). */
export async function renameTunerRun(events: EventStore, projectId: number, coordinatorJobId: number, name: string, ctx: CommandContext): Promise<Position | undefined> {
  const { appended } = await handleCommand(events, tunerRunStream(projectId, coordinatorJobId), tunerRunDecider, { type: 'RenameTunerRun', data: { projectId, coordinatorJobId, name, now: ctx.now } }, ctx);
  return appended?.position;
}
