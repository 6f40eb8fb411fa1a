import type { Logger } from 'pino';
import { concatMap, filter, from, lastValueFrom, takeWhile } from 'rxjs';
import { CheckpointedSubscription, HandlerFailed, type BatchApplier, type Subscriber, type SubscriberFailure } from '../../processing/checkpointedSubscription';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import type { CommandContext } from '../commandContext';

/**
 * A process manager: reacts to events of the types it handles by sending commands. Delivery is at
 * least once (a crash between a reaction and its checkpoint shows the event again), so a reaction
 * must cause no second effect: its commands carry ids derived from the event (`sagaContext`) and
 * the deciders ignore an outcome already recorded.
 */
export interface Saga {
  /** Names its checkpoint and its command ids: renaming a saga that has run makes it start over. */
  name: string;
  handles: ReadonlySet<string>;
  react(event: StoredEvent): Promise<void>;
  /** Releases what the saga holds (connections); called once its runner has stopped. */
  close?(): Promise<void>;
}

export const sagaCheckpointName = (sagaName: string): string => `saga:${sagaName}`;

/**
 * The context of a command a saga sends in reaction to `event`. The command id, and so the ids of
 * the events the command appends, depend only on the saga, the event and the step: sent again after
 * a restart, the same command appends the same ids and the store keeps them once.
 */
export function sagaContext(sagaName: string, event: StoredEvent, options: { step?: number; now?: Date } = {}): CommandContext {
  return {
    actor: `system:${sagaName}`,
    correlationId: event.metadata.correlationId,
    causationId: event.id,
    commandId: `saga:${sagaName}:${event.id}:${options.step ?? 0}`,
    now: options.now ?? new Date(),
  };
}

interface SagaSubscriber extends Subscriber {
  readonly saga: Saga;
}

/**
 * Runs one saga over a checkpointed subscription to the whole log (CheckpointedSubscription), from
 * the checkpoint it keeps in the read store under `saga:<name>`. Reactions run one at a time in log
 * order; the checkpoint is stored after each one succeeds, and moved past events the saga does not
 * handle shortly after. A reaction that fails stalls the saga at that event: after a delay it is
 * tried again from there, never skipped. The delay doubles while the same event keeps failing, up
 * to `maxRetryDelayMs`; the failure is logged at error level once, the retries at debug level. Each
 * saga has its own runner, so one failing, or slow (an SMTP server that hangs), holds back no other
 * saga, and no failure ends the process.
 */
export class SagaRunner {
  private readonly subscription: CheckpointedSubscription<SagaSubscriber>;
  private starting: Promise<void> | undefined;
  private stopping = false;

  constructor(
    events: EventStore,
    readStore: ReadStore,
    readonly saga: Saga,
    private readonly log: Logger,
    retryDelayMs = 1000,
    maxRetryDelayMs = 60_000,
  ) {
    const subscriber: SagaSubscriber = { name: saga.name, checkpoint: sagaCheckpointName(saga.name), handles: saga.handles, saga };
    this.subscription = new CheckpointedSubscription({ events, readStore, subscribers: [subscriber], apply: this.react, log, kind: 'saga', retryDelayMs, maxRetryDelayMs });
  }

  /**
   * Starts the run in the background; it catches up with the log, then follows it. A checkpoint of
   * another log (ForeignCheckpointError) keeps it from starting: logged at error level, with why.
   */
  start(): void {
    if (this.starting) throw new Error(`Saga ${this.saga.name} was started already`);
    this.starting = this.subscription.start().catch((error: unknown) => {
      this.log.error({ err: error, saga: this.saga.name }, `saga ${this.saga.name} did not start`);
    });
  }

  /** Lets a reaction in progress finish, leaves the events not yet reacted to for the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.starting;
    await this.subscription.stop();
  }

  /** Failures the saga is stalled on (tests, health). */
  failures(): SubscriberFailure[] {
    return this.subscription.failures();
  }

  /**
   * One event at a time (concatMap keeps log order and waits for each reaction); the checkpoint is
   * stored after each reaction, so a restart repeats none that finished. The saga's decision stays
   * in react(); this pipeline is only its wiring to the subscription.
   */
  private readonly react: BatchApplier<SagaSubscriber> = async (member, events, commit) => {
    // Most batches (a device's samples) hold nothing the saga handles: passed over at once, not an
    // awaited step an event.
    const { handles } = member.subscriber;
    if (!events.some((event) => handles.has(event.type))) {
      const last = events.at(-1);
      if (last && (member.applied === undefined || last.position > member.applied)) member.applied = last.position;
      return;
    }
    const reactions = from(events).pipe(
      filter((event) => member.applied === undefined || event.position > member.applied),
      concatMap(async (event) => {
        if (!member.subscriber.handles.has(event.type)) {
          member.applied = event.position;
          return true;
        }
        // Stopping: what is left to react to is for the next start, unreacted and unstored.
        if (this.stopping) return false;
        try {
          await member.subscriber.saga.react(event);
        } catch (error) {
          throw new HandlerFailed(event, error);
        }
        await commit([], event.position);
        return true;
      }),
      takeWhile((goOn) => goOn),
    );
    await lastValueFrom(reactions, { defaultValue: true });
  };
}
