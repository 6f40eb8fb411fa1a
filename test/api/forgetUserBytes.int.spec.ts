// A deleted user leaves no byte of their personal data in the data folder. The
// check reads every file under it (SQLite files with their -wal and -shm, blob files) as bytes, the
// way someone holding a copy of the folder would, looking for each distinctive value in UTF-8 and
// UTF-16, and for the user's sealing key: free pages and write-ahead logs count as much as rows.
import { rm } from 'node:fs/promises';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findInFolder, valuesIn } from '../support/bytesScan';
import { dropMongoDatabases } from '../support/mongoTestDatabases';
import { pngChunk, pngHeader, PNG_SIGNATURE } from '../support/images';
import { call, describeOn, loginToken, setups, signup, startTestService, type TestService } from '../support/testService';
import { deflateSync } from 'node:zlib';

const PASSWORD = 'correct horse battery';
const EMAIL = 'quillon.vantablack.7f3a91@forget-me.example';
const NAME = 'Quillon Vantablack-Oyelaran';
const JOB_TITLE = 'Chief Zeppelin Whisperer 7f3a91';
const COMPANY = 'Oyelaran Aerostatics 7f3a91 SARL';
const NEW_JOB_TITLE = 'Senior Zeppelin Whisperer 7f3a91';
const PHOTO_MARKER = 'photo-bytes-7f3a91-only-in-this-picture';

/** A valid PNG whose bytes hold the marker in a text chunk: the photo is found by it. */
function markedPng(): Buffer {
  const row = Buffer.from([0, 12, 34, 56, 255, 78, 90, 12, 255]);
  return Buffer.concat([
    PNG_SIGNATURE,
    pngHeader(2, 2),
    pngChunk('tEXt', Buffer.from(`Comment\0${PHOTO_MARKER}`, 'latin1')),
    pngChunk('IDAT', deflateSync(Buffer.concat([row, row]))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

for (const setup of setups) {
  describeOn(setup, 'forgetting a user leaves none of their bytes behind', () => {
    let service: TestService;
    let dataDir: string;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      dataDir = service.config.dataDir;
    });
    let stopped = false;
    afterAll(async () => {
      if (!stopped) await service?.destroy();
      else {
        await rm(dataDir, { recursive: true, force: true });
        if (setup.mongo) await dropMongoDatabases([service.config.mongoDb, `${service.config.mongoDb}_keys`, `${service.config.mongoDb}_blobs`]);
      }
    });

    it('finds no e-mail, name, job title, company, photo or sealing key of a deleted user in any file, WAL or free page', async () => {
      const jwt = (token: string) => ({ 'x-jwt-token': token });
      // Someone else, whose project invites the user by their e-mail (what the inviter typed is kept).
      expect((await call(service, 'POST', '/api-user-create', { body: signup({ username: 'inviter', email: 'inviter@example.com', name: 'Inviter' }) })).status).toBe(200);
      const inviter = await loginToken(service, 'inviter');
      const theirs = await call(service, 'POST', '/api/projects/create', { headers: jwt(inviter), body: { projectName: 'Shared' } });
      expect(theirs.status).toBe(200);

      const created = await call(service, 'POST', '/api-user-create', { body: signup({ username: 'quillon', email: EMAIL, name: NAME }) });
      expect(created.status).toBe(200);
      const userId = Number(created.body.id);
      const token = await loginToken(service, 'quillon');
      // The profile changed twice: the older versions of the row are what free pages keep.
      expect((await call(service, 'POST', '/api/user', { headers: jwt(token), body: { jobTitle: JOB_TITLE, companyName: COMPANY } })).status).toBe(200);
      expect((await call(service, 'POST', '/api/user', { headers: jwt(token), body: { jobTitle: NEW_JOB_TITLE } })).status).toBe(200);
      const photo = new FormData();
      photo.append('photo', new Blob([markedPng()], { type: 'image/png' }), 'me.png');
      const uploaded = await fetch(`${service.apiUrl}/v1/api/user/photo`, { method: 'POST', headers: jwt(token), body: photo });
      expect(uploaded.status).toBe(200);
      const project = await call(service, 'POST', '/api/projects/create', { headers: jwt(token), body: { projectName: 'Mine' } });
      expect(project.status).toBe(200);
      expect((await call(service, 'POST', `/api/${Number(theirs.body.id)}/collaborators/add`, { headers: jwt(inviter), body: { usernameOrEmail: EMAIL.toUpperCase() } })).status).toBe(200);

      const key = await service.stores.keys.get(`user-${userId}`);
      expect(key).toBeInstanceOf(Buffer);
      const values = { email: EMAIL, name: NAME, 'job title': JOB_TITLE, 'new job title': NEW_JOB_TITLE, company: COMPANY, photo: PHOTO_MARKER, 'sealing key': key! };
      // The check can fail: before the deletion the values are there to be found.
      const present = [expect.stringMatching(/^email in /), expect.stringMatching(/^photo in /), expect.stringMatching(/^sealing key in /)];
      expect(setup.mongo ? await findInMongo(service.config.mongoDb, values) : await findInFolder(dataDir, values)).toEqual(expect.arrayContaining(present));

      expect((await call(service, 'DELETE', '/api/user', { headers: jwt(token), body: { password: PASSWORD } })).status).toBe(200);
      const head = await service.stores.events.headPosition();
      expect(await service.projections!.waitFor(head!, 10_000)).toBe(true);

      expect(await findInFolder(dataDir, values)).toEqual([]);
      if (setup.mongo) expect(await findInMongo(service.config.mongoDb, values)).toEqual([]);
      // The log still reads: the user's events are there, their sealed fields unreadable.
      expect((await service.stores.events.readStream(`user-${userId}`))[0]!.data).toMatchObject({ email: null, name: null });
      expect((await service.checkReadModels()).differing).toBe(0);

      // Stopped, the service copies its write-ahead logs into the files: their free pages hold nothing either.
      stopped = true;
      await service.stop();
      expect(await findInFolder(dataDir, values)).toEqual([]);
    });
  });
}

/** Every MongoDB document (read models, keys, GridFS files and chunks) holding one of the values. */
async function findInMongo(db: string, values: Record<string, string | Buffer>): Promise<string[]> {
  const client = await MongoClient.connect(process.env.MONGO_URL!);
  const found: string[] = [];
  try {
    for (const name of [db, `${db}_keys`, `${db}_blobs`]) {
      for (const { name: collection } of await client.db(name).listCollections().toArray()) {
        for await (const doc of client.db(name).collection(collection).find()) {
          const bytes = Buffer.concat([Buffer.from(JSON.stringify(doc)), ...Object.values(doc).flatMap((v) => (v && typeof v === 'object' && 'buffer' in v ? [Buffer.from((v as { buffer: Uint8Array }).buffer)] : []))]);
          for (const what of valuesIn(bytes, values)) found.push(`${what} in ${name}.${collection}`);
        }
      }
    }
  } finally {
    await client.close();
  }
  return found;
}
