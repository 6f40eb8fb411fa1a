// A received file is made durable once whole (the blob store syncs it before moving it in), but
// the kernel writes nothing of it to disk before that sync unless pushed: 100 MB of dirty pages
// then took the whole sync's time after the last byte arrived. Syncing every few megabytes while
// the file grows writes the disk behind the receiving, and leaves the last sync little to do.
import { open, type FileHandle } from 'node:fs/promises';

/** Bytes received between two syncs; a sync still running when the next is due is not doubled. */
export const WRITE_BEHIND_BYTES = 8 * 1024 * 1024;

export class WriteBehind {
  private handle: Promise<FileHandle | undefined> | undefined;
  private syncing: Promise<void> | undefined;
  private unsynced = 0;

  constructor(
    private readonly file: string,
    private readonly every = WRITE_BEHIND_BYTES,
  ) {}

  /** Counts bytes handed to the file's writer; starts a sync in the background when enough came. */
  wrote(bytes: number): void {
    this.unsynced += bytes;
    if (this.unsynced < this.every || this.syncing) return;
    this.unsynced = 0;
    // Its own descriptor: the writer's may close while a sync runs. Failures are not this one's to
    // report: the sync that makes the file durable runs anyway, and reports them.
    this.handle ??= open(this.file, 'r+').catch(() => undefined);
    this.syncing = this.handle
      .then((handle) => handle?.datasync())
      .catch(() => {})
      .finally(() => (this.syncing = undefined));
  }

  /** Waits for the sync in flight and lets the descriptor go. */
  async close(): Promise<void> {
    await this.syncing;
    const handle = await this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => {});
  }
}
