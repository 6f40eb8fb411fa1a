import { describe, expect, it } from 'vitest';
import type { DeviceSamplingRequested } from '../../domain/device/deviceEvents';
import { FrameBudget, helloReply, sampleRequestFrame, startSnapshotFrame, stopSnapshotFrame } from '../../domain/device/remoteReplies';

const now = new Date('2026-11-28T10:00:00.000Z');
const request: DeviceSamplingRequested['data'] = {
  projectId: 3, deviceId: 'ac:87:a3', requestId: 900, connectionId: 'c1', label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)', requested: now.toISOString(),
};

describe('the hello reply', () => {
  it('says yes with the server time, or no with the reason (and auth: false for a bad key)', () => {
    expect(JSON.parse(helloReply({ ok: true }, now))).toEqual({ hello: true, serverTimestamp: now.getTime() });
    expect(JSON.parse(helloReply({ ok: false, reason: 'Invalid API key', auth: false }, now))).toEqual({ hello: false, err: 'Invalid API key', auth: false, serverTimestamp: now.getTime() });
    expect(JSON.parse(helloReply({ ok: false, reason: 'Invalid hello: version' }, now))).toEqual({ hello: false, err: 'Invalid hello: version', serverTimestamp: now.getTime() });
  });
});

describe('the sample request', () => {
  it('has the fields the device library reads, a path that gives the category, and the HMAC key', () => {
    expect(JSON.parse(sampleRequestFrame(request, 'hmac-1'))).toEqual({ sample: { label: 'cat', length: 1000, path: '/api/training/data', hmacKey: 'hmac-1', interval: 1, sensor: 'Camera (640x480)' } });
    const { sensor: _sensor, ...noSensor } = request;
    expect(JSON.parse(sampleRequestFrame({ ...noSensor, category: 'testing' }, 'k'))).toEqual({ sample: { label: 'cat', length: 1000, path: '/api/testing/data', hmacKey: 'k', interval: 1 } });
  });

  it('snapshot start and stop', () => {
    expect(JSON.parse(startSnapshotFrame())).toEqual({ startSnapshot: true, resolution: 'low' });
    expect(JSON.parse(stopSnapshotFrame())).toEqual({ stopSnapshot: true });
  });
});

describe('the frame budget', () => {
  it('allows a burst, then the steady rate, and refills with time (times given, not measured)', () => {
    const b = new FrameBudget(10, 5);
    const t0 = 1_000_000;
    expect(Array.from({ length: 6 }, () => b.take(t0))).toEqual([true, true, true, true, true, false]);
    expect(b.take(t0 + 100)).toBe(true); // 0.1 s at 10/s: one more frame
    expect(b.take(t0 + 100)).toBe(false);
    expect(Array.from({ length: 6 }, () => b.take(t0 + 60_000)).filter(Boolean)).toHaveLength(5); // never more than the burst
  });

  it('does not refill when the clock goes back', () => {
    const b = new FrameBudget(10, 1);
    expect(b.take(5000)).toBe(true);
    expect(b.take(1000)).toBe(false);
    expect(b.take(5000)).toBe(false);
    expect(b.take(5100)).toBe(true);
  });
});
