// `npm run rebuild -- --verify`: the read models rebuilt from the log into a scratch store and
// compared with the live ones; identical after real traffic, and a changed document is named.
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { READ_MODELS_FILE } from '../../service/composition';
import { DataFolderBusyError } from '../../service/dataFolderLock';
import { verifyReadModels } from '../../service/rebuild';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { inviteAndAccept } from '../support/collaborators';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

const silent = pino({ level: 'silent' });

function output(): { text: () => string; write(chunk: string): boolean; isTTY: boolean } {
  const chunks: string[] = [];
  return { isTTY: false, text: () => chunks.join(''), write: (chunk: string) => chunks.push(chunk) > 0 };
}

describe('rebuild --verify on the embedded read models', () => {
  let service: TestService | undefined;
  afterEach(async () => {
    await service?.destroy();
    service = undefined;
  });

  it('finds the live read models identical to a rebuild after traffic, and names a changed document', async () => {
    service = await startTestService({ mongo: false });
    const ada = await registerUser(service, 'ada');
    const bob = await registerUser(service, 'bob');
    const created = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': ada.token }, body: { projectName: 'Verified' } });
    const projectId = Number(created.body.id);
    await inviteAndAccept(service, projectId, ada.token, bob.token, 'bob');
    await call(service, 'POST', `/api/${projectId}`, { headers: { 'x-jwt-token': ada.token }, body: { description: 'checked' } });
    await service.stop();

    const out = output();
    expect(await verifyReadModels(service.config, silent, output(), out)).toBe(0);
    expect(out.text()).toMatch(/^rebuilt \d+ events into a scratch store \(\d+ events\/s\) and compared \d+ documents in \d+ collections: identical\n$/);

    const live = SqliteReadStore.open(path.join(service.config.dataDir, READ_MODELS_FILE));
    await live.collection('projects').updateOne({ _id: projectId }, { $set: { description: 'tampered' } });
    await live.close();
    const tampered = output();
    expect(await verifyReadModels(service.config, silent, output(), tampered)).toBe(1);
    expect(tampered.text()).toContain('1 differ');
    expect(tampered.text()).toContain(`projects ${projectId}:`);
    expect(tampered.text()).toMatch(/live: .*"description":"tampered"/);
    expect(tampered.text()).toMatch(/rebuilt: .*"description":"checked"/);
  });

  it('refuses to run beside a service process on the same data folder', async () => {
    service = await startTestService({ mongo: false });
    await expect(verifyReadModels(service.config, silent, output(), output())).rejects.toThrow(DataFolderBusyError);
  });
});
