import { describe, expect, it } from 'vitest';
import { ConnectionRegistry } from '../../remote/connectionRegistry';

const held = (connectionId: string, deviceId = 'ac:87:a3', projectId = 3) => ({ projectId, deviceId, connectionId, socket: { name: connectionId } });

describe('the sockets a remote process holds', () => {
  it('finds a socket by device and by connection id', () => {
    const r = new ConnectionRegistry<{ name: string }>();
    expect(r.add(held('c1'))).toBeUndefined();
    expect(r.device(3, 'ac:87:a3')?.connectionId).toBe('c1');
    expect(r.connection('c1')?.deviceId).toBe('ac:87:a3');
    expect(r.device(4, 'ac:87:a3')).toBeUndefined();
  });

  it('a second socket of the same device replaces the first, which is answered to be closed', () => {
    const r = new ConnectionRegistry<{ name: string }>();
    r.add(held('c1'));
    expect(r.add(held('c2'))?.connectionId).toBe('c1');
    expect(r.size).toBe(1);
    expect(r.connection('c1')).toBeUndefined();
    // The replaced socket closing later lets go of nothing.
    expect(r.remove('c1')).toBe(false);
    expect(r.device(3, 'ac:87:a3')?.connectionId).toBe('c2');
  });

  it('the same device id in two projects is two devices', () => {
    const r = new ConnectionRegistry<{ name: string }>();
    r.add(held('c1', 'd', 3));
    expect(r.add(held('c2', 'd', 4))).toBeUndefined();
    expect(r.size).toBe(2);
  });

  it('removes an ended socket once', () => {
    const r = new ConnectionRegistry<{ name: string }>();
    r.add(held('c1'));
    expect(r.remove('c1')).toBe(true);
    expect(r.remove('c1')).toBe(false);
    expect(r.size).toBe(0);
    expect([...r.all()]).toEqual([]);
  });
});
