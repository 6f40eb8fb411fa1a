// Two-axis samples at 100 Hz that a classifier can tell apart ("idle" a slow wave, "wave" a fast one),
// uploaded through the ingestion API and awaited in the management API's read models.
import { expect } from 'vitest';
import { signedSample } from './signedSample';
import { call } from './testService';

/** `length` rows of a sine and cosine of frequency `f` (in cycles per 100 rows), phase `seed`. */
export const waveRows = (length: number, f: number, seed: number): number[][] =>
  Array.from({ length }, (_, i) => [Math.round(1000 * Math.sin((2 * Math.PI * f * i) / 100 + seed)) / 100, Math.round(1000 * Math.cos((2 * Math.PI * f * i) / 100 + seed)) / 200]);

/**
 * Uploads `count` training samples of `length` rows, labelled idle and wave in turn, then waits until
 * the raw-data count shows them (ingestion answers once a sample is durable, before the read models have it).
 */
export async function uploadWaveSamples(
  service: { apiUrl: string; ingestionUrl: string },
  project: { id: number; apiKey: string; headers: Record<string, string> },
  count: number,
  length: number,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const label = i % 2 === 0 ? 'idle' : 'wave';
    const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
      method: 'POST',
      headers: { 'x-api-key': project.apiKey, 'content-type': 'application/json', 'x-file-name': `${label}.${i}.json`, 'x-label': label },
      body: signedSample('none', waveRows(length, label === 'idle' ? 1 : 9, i), { alg: 'none' }),
    });
    expect(res.status).toBe(200);
  }
  await expect.poll(async () => (await call(service, 'GET', `/api/${project.id}/raw-data/count?category=training`, { headers: project.headers })).body.count, { timeout: 30_000 }).toBe(count);
}
