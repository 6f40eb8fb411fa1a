// A damaged read-models.sqlite (truncated, or pages overwritten inside) is found at
// start, named in the log, and rebuilt from the log; the service then serves and writes. Before, a
// truncated file stopped the start with a raw "database disk image is malformed", and a file damaged
// inside stopped the process at its first write, from the group-commit timer, at every restart.
import { open, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../main';
import { READ_MODELS_FILE } from '../../service/composition';
import { adaWithProject, call, startTestService, type TestService } from '../support/testService';

type Line = { level: number; msg?: string; file?: string };

const damages: Record<string, (file: string) => Promise<void>> = {
  truncated: async (file) => truncate(file, Math.floor((await stat(file)).size / 3)),
  'overwritten inside': async (file) => {
    // Every page but the first (the header and the schema) filled with noise, the size kept.
    const { size } = await stat(file);
    const handle = await open(file, 'r+');
    try {
      const noise = Buffer.alloc(size - 4096, 0xa5);
      await handle.write(noise, 0, noise.length, 4096);
    } finally {
      await handle.close();
    }
  },
};

describe('a damaged read-models.sqlite', () => {
  let service: TestService | undefined;
  let restarted: RunningService | undefined;
  afterEach(async () => {
    await restarted?.stop();
    restarted = undefined;
    await service?.destroy().catch(() => {});
    service = undefined;
  });

  for (const [kind, damage] of Object.entries(damages)) {
    it(`${kind}: is named at start and rebuilt from the log; the service serves and writes`, async () => {
      service = await startTestService({ mongo: false });
      const { ada, projectId } = await adaWithProject(service, 'Damaged');
      await service.stop();
      const file = path.join(service.config.dataDir, READ_MODELS_FILE);
      for (const suffix of ['-wal', '-shm']) await rm(file + suffix, { force: true });
      await damage(file);

      const lines: Line[] = [];
      const log = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as Line), done()) }));
      restarted = await startService(service.config, log);
      const said = lines.find((l) => l.level >= 50 && l.file === file);
      expect(said?.msg).toMatch(/is damaged .*rebuilding it from the log/);
      const api = { apiUrl: restarted.apiUrl! };
      expect((await call(api, 'GET', `/api/${projectId}`, { headers: ada })).status).toBe(200);
      // Writes go through, and the group commit after them too: the process lives on.
      const created = await call(api, 'POST', '/api/projects/create', { headers: ada, body: { projectName: 'After' } });
      expect(created.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await call(api, 'GET', `/api/${String(created.body.id)}`, { headers: ada })).status).toBe(200);
    });
  }
});
