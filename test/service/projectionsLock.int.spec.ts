// One process (or thread) keeps the read models of a data folder: a second projection runner would
// apply every event again, and an increment applied twice counts twice (a project's data summary).
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, startService, type RunningService } from '../../main';
import { DataFolderBusyError } from '../../service/dataFolderLock';
import { besideEnv, call, registerUser, startTestService, type TestService } from '../support/testService';

const silent = pino({ level: 'silent' });
const env = (dataDir: string, roles: string, threadRoles?: string) => besideEnv(dataDir, { ROLES: roles, ...(threadRoles === undefined ? {} : { THREAD_ROLES: threadRoles }) });

describe('the projections role on a data folder', () => {
  let first: TestService | undefined;
  const others: RunningService[] = [];

  afterEach(async () => {
    for (const other of others.splice(0)) await other.stop();
    await first?.destroy();
    first = undefined;
  });

  it('is refused to a second process while one holds it, which goes on serving; processes without it start', async () => {
    first = await startTestService({ mongo: false });
    const { token } = await registerUser(first);
    const project = await call(first, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Kept once' } });
    expect(project.status).toBe(200);

    const refused = startService(loadConfig(env(first.config.dataDir, 'api,projections', 'none')), silent);
    await expect(refused).rejects.toThrow(DataFolderBusyError);
    await expect(startService(loadConfig(env(first.config.dataDir, 'api,projections', 'none')), silent)).rejects.toThrow(/runs the projections role/);
    // The default layout runs the projections on a thread: that thread is refused, and so the start.
    await expect(startService(loadConfig(env(first.config.dataDir, 'api,projections')), silent)).rejects.toThrow(/runs the projections role/);

    // The first goes on as before.
    const read = await call(first, 'GET', `/api/${project.body.id}`, { headers: { 'x-jwt-token': token } });
    expect(read.status).toBe(200);
    // A process that only serves, on the read models the first keeps, starts.
    others.push(await startService(loadConfig(env(first.config.dataDir, 'api')), silent));
  });

  it('passes to another process once its holder has stopped', async () => {
    first = await startTestService({ mongo: false });
    const dataDir = first.config.dataDir;
    await first.stop();
    const next = await startService(loadConfig(env(dataDir, 'api,projections', 'none')), silent);
    others.push(next);
    expect(next.apiUrl).toMatch(/^http:/);
  });
});
