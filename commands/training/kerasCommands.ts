import { kerasDecider, type KerasState } from '../../domain/learn/kerasDecider';
import { kerasStream } from '../../domain/learn/kerasEvents';
import type { KerasSettingsChange } from '../../domain/learn/kerasSettings';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';

/** Merges a settings change into a keras block's settings; the state after it, and the position to settle on. */
export async function setKerasSettings(events: EventStore, projectId: number, learnId: number, change: KerasSettingsChange, ctx: CommandContext): Promise<{ state: KerasState; position: Position | undefined }> {
  const { state, appended } = await handleCommand(events, kerasStream(projectId, learnId), kerasDecider, { type: 'SetKerasSettings', data: { projectId, learnId, change, now: ctx.now } }, ctx);
  return { state, position: appended?.position };
}
