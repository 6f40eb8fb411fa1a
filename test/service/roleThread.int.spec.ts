// The thread of THREAD_ROLES as the main thread sees it: a start that fails rejects with the reason,
// and a thread that ends while it should run is told (the command line then stops the service).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../main';
import { RoleThreadError, startRoleThread } from '../../service/roles/roleThread';

const STAND_IN = 'test/support/roleThreadStandIns';
const config = (dataDir: string) => loadConfig({ DATA_DIR: dataDir, THREAD_ROLES: 'projections,sagas,jobs' });

describe('the thread of THREAD_ROLES', () => {
  it('rejects its start with the reason its roles could not start', async () => {
    const ended: Error[] = [];
    const thread = startRoleThread(config('/tmp/role-thread-fails-to-start'), pino({ level: 'silent' }), (e) => ended.push(e), STAND_IN);
    await expect(thread.started).rejects.toThrow(RoleThreadError);
    await expect(thread.started).rejects.toThrow(/could not start on their thread: the stand-in cannot start/);
    await thread.stop();
    // A start that failed is the caller's to report, not an end while running.
    expect(ended).toEqual([]);
  });

  it('tells when the thread fails after its roles started', async () => {
    let told: ((error: Error) => void) | undefined;
    const ended = new Promise<Error>((resolve) => (told = resolve));
    const thread = startRoleThread(config('/tmp/role-thread-ends'), pino({ level: 'silent' }), (e) => told!(e), STAND_IN);
    await thread.started;
    const error = await ended;
    expect(error).toBeInstanceOf(RoleThreadError);
    expect(error.message).toMatch(/failed: the stand-in thread failed while running/);
    // Stopping a thread that has ended answers at once.
    await thread.stop();
  });
});
