import { describe, expect, it } from 'vitest';
import { canonicalJson, versionContents, type VersionContentsDeps } from '../../commands/versions/versionContents';

const sha = (c: string) => c.repeat(64);
const sample = (id: number, label: string, content: string) => ({ id, label, category: 'training', sha256: sha(content) });
const impulse = { id: 1, name: 'Motion', dspBlocks: [{ id: 2 }, { id: 5 }], learnBlocks: [{ id: 3, type: 'keras' }, { id: 4, type: 'anomaly' }, { id: 6, type: 'keras' }], dspConfigs: { '2': { scale: '1' } }, _position: '1' };

function deps(overrides: Partial<Record<keyof VersionContentsDeps, unknown>> = {}): VersionContentsDeps {
  return {
    samples: { ids: async () => [sample(2, 'wave', 'b'), sample(1, 'idle', 'a'), sample(3, 'idle', 'a')] },
    impulses: { forProject: async () => [impulse] },
    dspFeatures: {
      current: async (_p: number, dspId: number) =>
        dspId === 2
          ? { current: true, categories: { training: { x: sha('c'), y: sha('d'), raw: null } }, metadata: sha('e'), explorer: null, importance: null }
          : { current: false, categories: { training: { x: sha('9'), y: sha('9') } }, metadata: sha('9') },
    },
    kerasModels: { byLearnBlock: async (_p: number, learnId: number) => (learnId === 3 ? { model: { model: sha('f'), validation: { accuracy: 0.75 } } } : { model: null }) },
    anomalyModels: { byLearnBlock: async () => ({ model: { model: sha('1') } }) },
    modelTesting: { latest: async () => ({ summary: { accuracy: 0.5 } }) },
    ...overrides,
  } as unknown as VersionContentsDeps;
}

describe('what a version covers', () => {
  it('names the live samples\' blobs once, the current features\' blobs, each trained model with its accuracy, and the metrics', async () => {
    const c = await versionContents(deps(), 1);
    expect(c).toMatchObject({
      samples: { count: 3, blobs: [sha('a'), sha('b')] },
      features: [sha('c'), sha('d'), sha('e')].sort(),
      models: [{ learnId: 3, type: 'keras', model: sha('f'), accuracy: 0.75 }, { learnId: 4, type: 'anomaly', model: sha('1'), accuracy: null }],
      trainingAccuracy: 0.75,
      testAccuracy: 0.5,
    });
    expect(c.samples.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(c.impulses).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives the same digests whatever order the read store answers in, and other digests when a label or a config changes', async () => {
    const base = await versionContents(deps(), 1);
    const reordered = { ...impulse, _position: '2', dspConfigs: { '2': { scale: '1' } }, learnBlocks: impulse.learnBlocks, name: 'Motion' };
    const same = await versionContents(deps({ impulses: { forProject: async () => [Object.fromEntries(Object.entries(reordered).reverse())] }, samples: { ids: async () => [sample(3, 'idle', 'a'), sample(1, 'idle', 'a'), sample(2, 'wave', 'b')] } }), 1);
    expect([same.samples.digest, same.impulses]).toEqual([base.samples.digest, base.impulses]);
    const relabelled = await versionContents(deps({ samples: { ids: async () => [sample(1, 'wave', 'a'), sample(2, 'wave', 'b'), sample(3, 'idle', 'a')] } }), 1);
    expect(relabelled.samples.digest).not.toBe(base.samples.digest);
    const reconfigured = await versionContents(deps({ impulses: { forProject: async () => [{ ...impulse, dspConfigs: { '2': { scale: '2' } } }] } }), 1);
    expect(reconfigured.impulses).not.toBe(base.impulses);
  });

  it('writes canonical JSON: keys sorted at every depth, undefined and read-model bookkeeping left out', () => {
    expect(canonicalJson({ b: [{ z: 1, a: undefined }], a: 'x', _position: '9' })).toBe('{"a":"x","b":[{"z":1}]}');
  });
});
