// Runs against MONGO_URL (MongoDB, or FerretDB in CI) in a database of its own, dropped at the end.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MongoReadStore, OTHERS_LOOK_MS } from '../../stores/readstore/mongoReadStore';
import { mongoSkipReason, mongoUrl, testDatabase } from '../support/mongoTestDatabases';
import { readStoreContract } from './readStore.contract';

const dbName = testDatabase('test_readstore');
readStoreContract('MongoReadStore', () => MongoReadStore.connect(mongoUrl!, dbName), mongoSkipReason);

const suite = mongoSkipReason === undefined ? describe : describe.skip;
suite(`MongoReadStore change mark across processes${mongoSkipReason ? ` (skipped: ${mongoSkipReason})` : ''}`, () => {
  const otherDb = testDatabase('test_readstore_marks');
  let writer: MongoReadStore;
  let reader: MongoReadStore;
  beforeEach(async () => {
    writer = await MongoReadStore.connect(mongoUrl!, otherDb);
    reader = await MongoReadStore.connect(mongoUrl!, otherDb);
    await writer.dropAll();
  });
  afterEach(async () => {
    await writer.dropAll();
    await reader.close();
    await writer.close();
  });

  it("moves within a look's time after another store commits a projection's writes with their checkpoint", async () => {
    const before = reader.changeMark();
    // Let the first look see the checkpoints as they are.
    await sleep(OTHERS_LOOK_MS * 2);
    const settled = reader.changeMark();
    await sleep(OTHERS_LOOK_MS * 2);
    expect(reader.changeMark(), 'nothing changed: the mark stands').toBe(settled);
    await writer.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's1', label: 'cat' } }], [{ name: 'samples', position: 7n }]);
    // A look every OTHERS_LOOK_MS; a loaded server may take longer to answer one.
    const deadline = Date.now() + 10_000;
    while (reader.changeMark() === settled && Date.now() < deadline) await sleep(OTHERS_LOOK_MS / 5);
    expect(reader.changeMark()).not.toBe(settled);
    expect(before).toBeLessThanOrEqual(settled);
  });

  it("moves at once when it reads another store's checkpoint that moved (waiting for a write to settle)", async () => {
    await writer.setCheckpoint('samples', 1n);
    expect(await reader.getCheckpoint('samples')).toBe(1n);
    const before = reader.changeMark();
    await writer.commit([{ kind: 'put', collection: 'samples', doc: { _id: 's2', label: 'dog' } }], [{ name: 'samples', position: 2n }]);
    expect(await reader.readCheckpoint('samples')).toEqual({ position: 2n });
    expect(reader.changeMark()).not.toBe(before);
  });
});
