// What the server sends a device on the remote-management socket (docs/remote-management.md),
// and the per-connection frame budget. Pure: the `remote` role does the sending.
import type { DeviceSamplingRequested } from './deviceEvents';

/** The answer to a hello: it must be the first frame the server sends (the library reads it with `once`). */
export function helloReply(result: { ok: true } | { ok: false; reason: string; auth?: false }, now: Date): string {
  const serverTimestamp = now.getTime();
  if (result.ok) return JSON.stringify({ hello: true, serverTimestamp });
  return JSON.stringify({ hello: false, err: result.reason, ...(result.auth === false ? { auth: false } : {}), serverTimestamp });
}

/**
 * The sample request for a device. The device uploads to its ingestion host + `path`, and takes
 * the category from whether `path` contains `/training` (linux-device.js sampleRequest). The HMAC
 * key is the project's, read when sending: it is never in the event.
 */
export function sampleRequestFrame(request: DeviceSamplingRequested['data'], hmacKey: string): string {
  return JSON.stringify({
    sample: {
      label: request.label,
      length: request.lengthMs,
      path: `/api/${request.category}/data`,
      hmacKey,
      interval: request.intervalMs,
      ...(request.sensor !== undefined ? { sensor: request.sensor } : {}),
    },
  });
}

export const startSnapshotFrame = (resolution: 'low' | 'high' = 'low'): string => JSON.stringify({ startSnapshot: true, resolution });
export const stopSnapshotFrame = (): string => JSON.stringify({ stopSnapshot: true });

/** Frames a connection may send per second on average, and in a burst (a snapshot stream is ~5-10 fps). */
export const REMOTE_FRAMES_PER_SECOND = 50;
export const REMOTE_FRAME_BURST = 100;

/**
 * A token bucket over frames. `take(nowMs)` is false when the device sends faster than the budget:
 * the server then closes the connection (1008) and the device's own reconnect slows it down.
 */
export class FrameBudget {
  private tokens: number;
  private last: number | undefined;

  constructor(
    private readonly perSecond = REMOTE_FRAMES_PER_SECOND,
    private readonly burst = REMOTE_FRAME_BURST,
  ) {
    this.tokens = burst;
  }

  take(nowMs: number): boolean {
    if (this.last !== undefined && nowMs > this.last) this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) / 1000) * this.perSecond);
    this.last = this.last === undefined ? nowMs : Math.max(this.last, nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
