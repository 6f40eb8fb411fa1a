import { describe, expect, it } from 'vitest';
import { DataFolderBusyError } from '../../service/dataFolderLock';
import { RoleThreadError } from '../../service/roles/roleThread';
import { operatorMessage } from '../../service/startFailure';

describe('the one line a start that failed for the operator prints', () => {
  it('is the busy folder\'s message, met on this thread or by the thread of THREAD_ROLES', () => {
    const busy = new DataFolderBusyError('Another service process on /data runs the projections role');
    expect(operatorMessage(busy)).toBe(busy.message);
    expect(operatorMessage(new RoleThreadError(`The roles projections could not start on their thread: ${busy.message}`, busy.message))).toBe(busy.message);
  });

  it('is none for a failure of ours, on either thread: that one is shown in full', () => {
    expect(operatorMessage(new Error('a bug'))).toBeUndefined();
    expect(operatorMessage(new RoleThreadError('The thread of the roles projections failed: a bug'))).toBeUndefined();
  });
});
