// Two processes opening a read-models file that must be laid out anew (an upgrade, with the roles
// started together): the second waits for the first's work and finds it done, rather than failing
// at the busy timeout of ordinary writes.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReadModelIndexes } from '../../stores/readstore/indexDeclarations';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { toExpressionLayout } from '../support/expressionLayout';

const indexes: ReadModelIndexes = { items: [{ keys: { group: 1 } }] };
const ROWS = 150_000;

describe('laying a read-models file out anew, from two processes at once', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-relayout-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('makes the second wait for the first and find the work done', { timeout: 60_000 }, async () => {
    const file = path.join(dir, 'read-models.sqlite');
    const store = SqliteReadStore.open(file, { indexes });
    for (let from = 0; from < ROWS; from += 10_000) {
      await store.commit(Array.from({ length: 10_000 }, (_, i) => ({ kind: 'put' as const, collection: 'items', doc: { _id: from + i, group: (from + i) % 10, text: 'x'.repeat(40) } })), []);
    }
    await store.close();
    toExpressionLayout(file, 'items', { group: ['group'] });

    const script = path.join(dir, 'relayout.mts');
    await writeFile(
      script,
      `import { SqliteReadStore } from ${JSON.stringify(path.resolve(__dirname, '../../stores/readstore/sqliteReadStore.ts'))};
const store = SqliteReadStore.open(${JSON.stringify(file)}, { indexes: ${JSON.stringify(indexes)}, onRelayout: (c, n) => console.log('relayout', c, n) });
await store.close();
console.log('done');\n`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: path.resolve(__dirname, '../..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('relayout')) resolve();
      });
      child.on('exit', () => reject(new Error(`the child ended before laying out: ${out} ${err}`)));
    });
    expect(out).toContain(`relayout items ${ROWS}`);

    // The child holds the write lock while it lays the rows out: far longer than this busy timeout.
    const told: string[] = [];
    const second = SqliteReadStore.open(file, { indexes, busyTimeoutMs: 50, onRelayout: (c) => told.push(c) });
    try {
      expect(told).toEqual([]);
      expect(await second.collection('items').count({ group: 3 })).toBe(ROWS / 10);
      expect(second.explainFind('items', { group: 3 }).plan.join(' ')).toMatch(/USING INDEX c:items:group/);
    } finally {
      await second.close();
    }
    expect(await exited, err).toBe(0);
    expect(out).toContain('done');
  });
});
