// `npm run audit -- export --out FILE [--project ID]`: the log, or one project's history, as NDJSON
// in the history's shape (secrets redacted, forgotten data marked), streamed from the log: memory
// stays flat whatever its size. A project's events are found by the history's own rule: the event
// names the project, or its stream's first event did. The file appears only once complete.

import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { historyEntry } from '../../projections/history/historyEntry';
import { projectIdOf } from '../../projections/history/historyProjection';
import type { SealingEventStore } from '../../stores/keystore/sealingEventStore';
import type { ProgressMeter } from './progressMeter';

export interface ExportOptions {
  out: string;
  projectId?: number;
}

export async function exportLog(events: SealingEventStore, options: ExportOptions, meter?: ProgressMeter): Promise<{ written: number; read: number }> {
  const partial = `${options.out}.part`;
  const file = createWriteStream(partial, { flags: 'w' });
  const failed = once(file, 'error').then(([error]) => {
    throw error;
  });
  // The streams of the project whose later events do not name it (jobs after their request).
  const projectStreams = new Set<string>();
  const head = await events.headPosition();
  let written = 0;
  let read = 0;
  try {
    for await (const event of events.readAll()) {
      read += 1;
      if (meter && read % 10_000 === 0) meter.update(read, head ? Number(event.position) / Number(head) : undefined);
      if (options.projectId !== undefined) {
        const named = projectIdOf(event.data);
        if (named === options.projectId && event.revision === 0n) projectStreams.add(event.streamId);
        if (named !== options.projectId && !(named === null && projectStreams.has(event.streamId))) continue;
      }
      const line = `${JSON.stringify(historyEntry(event, await events.isForgotten(event)))}\n`;
      written += 1;
      if (!file.write(line)) await Promise.race([once(file, 'drain'), failed]);
    }
    file.end();
    await Promise.race([once(file, 'finish'), failed]);
    await rename(partial, options.out);
  } catch (error) {
    file.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  meter?.finish(read);
  return { written, read };
}
