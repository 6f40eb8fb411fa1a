import { describe, expect, it } from 'vitest';
import { isConnectionOf, newConnectionId } from '../../remote/connectionIds';

describe('remote-management connection ids', () => {
  it('are the instance id and 16 random hex digits, each new', () => {
    const a = newConnectionId('edge-4802');
    expect(a).toMatch(/^edge-4802-[0-9a-f]{16}$/);
    expect(newConnectionId('edge-4802')).not.toBe(a);
    expect(isConnectionOf('edge-4802', a)).toBe(true);
  });

  it("never take another instance's ids for their own, even when one instance id starts with the other", () => {
    expect(isConnectionOf('edge-4802', newConnectionId('edge-48020'))).toBe(false);
    expect(isConnectionOf('edge', newConnectionId('edge-4802'))).toBe(false);
    expect(isConnectionOf('edge-4802', newConnectionId('other-4802'))).toBe(false);
    expect(isConnectionOf('edge-4802', 'edge-4802-0123456789ABCDEF')).toBe(false);
    expect(isConnectionOf('edge-4802', 'edge-4802-')).toBe(false);
  });
});
