// A version's description and its deletion, as the versions routes send them.
import { versionDecider, type VersionCommand } from '../../domain/version/versionDecider';
import { versionsStream } from '../../domain/version/versionEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';

async function send(events: EventStore, projectId: number, command: VersionCommand, ctx: CommandContext): Promise<Position | undefined> {
  return (await handleCommand(events, versionsStream(projectId), versionDecider, command, ctx)).appended?.position;
}

export function updateVersion(events: EventStore, input: { projectId: number; versionId: number; description: string }, ctx: CommandContext): Promise<Position | undefined> {
  return send(events, input.projectId, { type: 'UpdateVersion', data: { ...input, updated: ctx.now.toISOString() } }, ctx);
}

export function deleteVersion(events: EventStore, input: { projectId: number; versionId: number }, ctx: CommandContext): Promise<Position | undefined> {
  return send(events, input.projectId, { type: 'DeleteVersion', data: { ...input, deleted: ctx.now.toISOString() } }, ctx);
}
