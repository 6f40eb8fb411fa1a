// Sampling requests and their progress (DeviceSamplingRequested / DeviceSamplingProgressed, written
// by whichever process serves the call or holds the device's socket) as socket.io events to the
// project's job-socket clients (docs/remote-management.md, "Following a sampling request").
import type { Logger } from 'pino';
import type { DeviceSamplingProgressed, DeviceSamplingRequested, SamplingStage } from '../../domain/device/deviceEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { JobLogFeed } from './jobLogFeed';

export const SAMPLING_PROGRESS_EVENT = 'sampling-progress';

/** What a follower receives: `id` is the request id `startSampling` answered. */
export type SamplingProgressMessage = {
  id: number;
  deviceId: string;
  stage: 'requested' | SamplingStage;
  progressPercentage?: number;
  error?: string;
};

export type SamplingProgressListener = (message: SamplingProgressMessage) => void;

/** The message for an event, or undefined for any other event. */
export function samplingProgressMessage(event: Pick<StoredEvent, 'type' | 'data'>): { projectId: number; message: SamplingProgressMessage } | undefined {
  if (event.type === 'DeviceSamplingRequested') {
    const d = event.data as DeviceSamplingRequested['data'];
    return { projectId: d.projectId, message: { id: d.requestId, deviceId: d.deviceId, stage: 'requested' } };
  }
  if (event.type === 'DeviceSamplingProgressed') {
    const d = event.data as DeviceSamplingProgressed['data'];
    return {
      projectId: d.projectId,
      message: {
        id: d.requestId,
        deviceId: d.deviceId,
        stage: d.stage,
        ...(d.progressPercentage !== undefined ? { progressPercentage: d.progressPercentage } : {}),
        ...(d.error !== undefined ? { error: d.error } : {}),
      },
    };
  }
  return undefined;
}

/**
 * One watch on the shared log feed for every socket of the process, started with the first
 * follower and let go with the last; each event goes to the listeners of its project only.
 */
export class SamplingProgressFeed {
  private readonly byProject = new Map<number, Set<SamplingProgressListener>>();
  private watching: Promise<() => void> | undefined;

  constructor(
    private readonly feed: Pick<JobLogFeed, 'watch'>,
    private readonly log: Logger,
  ) {}

  /** Calls `listener` with the sampling progress of `projectId` until the returned function is called. */
  async follow(projectId: number, listener: SamplingProgressListener): Promise<() => void> {
    let set = this.byProject.get(projectId);
    if (!set) this.byProject.set(projectId, (set = new Set()));
    set.add(listener);
    const unfollow = () => {
      const current = this.byProject.get(projectId);
      if (!current?.delete(listener)) return;
      if (current.size === 0) this.byProject.delete(projectId);
      if (this.byProject.size === 0) this.release();
    };
    const watching = (this.watching ??= this.feed.watch((event) => this.deliver(event)));
    try {
      await watching;
    } catch (error) {
      if (this.watching === watching) this.watching = undefined;
      unfollow();
      throw error;
    }
    return unfollow;
  }

  private release(): void {
    const watching = this.watching;
    this.watching = undefined;
    watching?.then(
      (stop) => stop(),
      () => undefined,
    );
  }

  private deliver(event: StoredEvent): void {
    if (this.byProject.size === 0) return;
    const found = samplingProgressMessage(event);
    if (!found) return;
    for (const listener of this.byProject.get(found.projectId) ?? []) {
      try {
        listener(found.message);
      } catch (error) {
        this.log.error({ err: error }, 'a sampling progress listener failed');
      }
    }
  }
}
