import type { OptimizeConfigInput } from '../../domain/optimize/optimizeConfig';
import { optimizeConfigDecider } from '../../domain/optimize/optimizeConfigDecider';
import { optimizeConfigStream } from '../../domain/optimize/optimizeEvents';
import type { TunerProjectContext } from '../../domain/optimize/tunerSpaceInput';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';

/** Replaces a project's tuner config, checked against `context` (its impulse); the position to settle on (none when nothing changed). */
export async function setOptimizeConfig(events: EventStore, projectId: number, config: OptimizeConfigInput, context: TunerProjectContext, ctx: CommandContext): Promise<Position | undefined> {
  const { appended } = await handleCommand(events, optimizeConfigStream(projectId), optimizeConfigDecider, { type: 'SetOptimizeConfig', data: { projectId, config, context, now: ctx.now } }, ctx);
  return appended?.position;
}
