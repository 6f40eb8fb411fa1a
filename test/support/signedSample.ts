import { createHmac } from 'node:crypto';

/** A JSON sample signed exactly as the official device library signs it (sdk-reference 4.1). */
export function signedSample(hmacKey: string, values: number[][], overrides: { deviceName?: string; alg?: 'HS256' | 'none'; intervalMs?: number } = {}): string {
  const body = {
    protected: { ver: 'v1', alg: overrides.alg ?? 'HS256', iat: Math.floor(Date.now() / 1000) },
    signature: '0'.repeat(64),
    payload: {
      device_name: overrides.deviceName ?? 'ac:87:a3:0a:2d:1b',
      device_type: 'LINUX_TEST',
      interval_ms: overrides.intervalMs ?? 10,
      sensors: [
        { name: 'accX', units: 'm/s2' },
        { name: 'accY', units: 'm/s2' },
      ],
      values,
    },
  };
  const json = JSON.stringify(body);
  if (overrides.alg === 'none') return json;
  const signature = createHmac('sha256', hmacKey).update(json).digest('hex');
  return json.replace('0'.repeat(64), signature);
}
