import { userDecider, type UserCommand, type UserState } from '../../domain/user/userDecider';
import { userStream, type UserEvent } from '../../domain/user/userEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { aggregateStream } from '../aggregateStream';
import type { CommandContext } from '../commandContext';
import { handleCommand, type HandledCommand } from '../handleCommand';

export async function loadUser(events: EventStore, userId: number): Promise<UserState> {
  return (await aggregateStream(events, userStream(userId), userDecider)).state;
}

/** Runs a command on the user's stream (read, decide, append with retries). */
export function runUserCommand(events: EventStore, userId: number, command: UserCommand, ctx: CommandContext): Promise<HandledCommand<UserEvent, UserState>> {
  return handleCommand(events, userStream(userId), userDecider, command, ctx);
}
