// A trial's epochs to its run's stream, in batches: the training thread writes one line per epoch,
// and a short epoch can take milliseconds, so epochs wait here and go out together (one command, one
// append) at most once per interval, and at the end. A refusal (the run ended, the trial was
// finished or given to another job) is kept and stops the trial: it no longer has a place to report.
import type { TrialEpoch } from '../../domain/optimize/tunerRunEvents';
import { MAX_EPOCHS_PER_RECORD, tunerRunDecider } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream } from '../../domain/optimize/tunerRunEvents';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { handleCommand } from '../handleCommand';

export const EPOCH_REPORT_MS = 1000;

export class TrialEpochReporter {
  private pending: TrialEpoch[] = [];
  private sending: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** The refusal of a report, once one was refused. */
  failure: Error | undefined;

  constructor(
    private readonly events: EventStore,
    private readonly trial: { projectId: number; coordinatorJobId: number; trial: number; jobId: number },
    private readonly onFailure: (error: Error) => void,
    private readonly intervalMs = EPOCH_REPORT_MS,
  ) {}

  add(epoch: TrialEpoch): void {
    this.pending.push(epoch);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.intervalMs);
  }

  /** Sends what waits (after anything being sent); resolves when it is recorded. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) this.sending = this.sending.then(() => this.send(batch));
    return this.sending;
  }

  private async send(batch: TrialEpoch[]): Promise<void> {
    if (this.failure) return;
    const { projectId, coordinatorJobId, trial, jobId } = this.trial;
    try {
      for (let i = 0; i < batch.length; i += MAX_EPOCHS_PER_RECORD) {
        const now = new Date();
        await handleCommand(
          this.events,
          tunerRunStream(projectId, coordinatorJobId),
          tunerRunDecider,
          { type: 'RecordTrialEpoch', data: { projectId, coordinatorJobId, trial, jobId, epochs: batch.slice(i, i + MAX_EPOCHS_PER_RECORD), now } },
          systemContext('tuner-trial', now),
        );
      }
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.onFailure(this.failure);
    }
  }
}
