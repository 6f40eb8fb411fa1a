// What a version covers, by content hash, read from the read models the job's request waited for:
// the live samples (a digest over their ids, categories, labels and contents, and their blobs), the
// impulses with their blocks and DSP configs (a digest), the current features' blobs and each learn
// block's trained model with its validation accuracy. Digests are over canonical JSON (keys sorted),
// so the same contents give the same hash on every read store.
import { createHash } from 'node:crypto';
import { kerasModeOf } from '../../domain/learn/kerasRegression';
import type { VersionContents, VersionedModel } from '../../domain/version/versionEvents';
import type { AnomalyModelDocument } from '../../projections/anomalyModels/anomalyModelDocument';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { KerasModelDocument } from '../../projections/kerasModels/kerasModelDocument';
import type { ModelTestingDocument } from '../../projections/modelTesting/modelTestingDocument';
import type { SampleDocument } from '../../projections/samples/sampleDocument';

export interface VersionContentsDeps {
  samples: { ids(projectId: number, category: 'all'): Promise<SampleDocument[]> };
  impulses: { forProject(projectId: number): Promise<ImpulseDocument[]> };
  dspFeatures: { current(projectId: number, dspId: number): Promise<DspFeaturesDocument | null> };
  kerasModels: { byLearnBlock(projectId: number, learnId: number): Promise<KerasModelDocument | null> };
  anomalyModels: { byLearnBlock(projectId: number, learnId: number): Promise<AnomalyModelDocument | null> };
  modelTesting: { latest(projectId: number, impulseId: number): Promise<ModelTestingDocument | null> };
}

const SHA256 = /^[0-9a-f]{64}$/;

/** JSON with every object's keys sorted, and the read models' own bookkeeping (`_position`) left out. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([k, v]) => k !== '_position' && v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const digest = (value: unknown): string => createHash('sha256').update(canonicalJson(value)).digest('hex');

function featureBlobs(doc: DspFeaturesDocument): string[] {
  const named = [...Object.values(doc.categories).flatMap((c) => [c.x, c.y, c.raw]), doc.metadata, doc.explorer, doc.importance];
  return named.filter((sha): sha is string => typeof sha === 'string' && SHA256.test(sha));
}

export async function versionContents(deps: VersionContentsDeps, projectId: number): Promise<VersionContents> {
  const samples = (await deps.samples.ids(projectId, 'all')).sort((a, b) => a.id - b.id);
  const impulses = (await deps.impulses.forProject(projectId)).sort((a, b) => a.id - b.id);
  const features = new Set<string>();
  const models: VersionedModel[] = [];
  let testAccuracy: number | null = null;
  for (const impulse of impulses) {
    for (const block of impulse.dspBlocks) {
      const doc = await deps.dspFeatures.current(projectId, block.id);
      if (doc?.current) for (const sha of featureBlobs(doc)) features.add(sha);
    }
    for (const block of impulse.learnBlocks) {
      if (kerasModeOf(block.type) !== undefined) {
        const model = (await deps.kerasModels.byLearnBlock(projectId, block.id))?.model;
        if (model) models.push({ learnId: block.id, type: 'keras', model: model.model, accuracy: model.validation.accuracy ?? null });
      } else if (block.type === 'anomaly') {
        const model = (await deps.anomalyModels.byLearnBlock(projectId, block.id))?.model;
        if (model) models.push({ learnId: block.id, type: 'anomaly', model: model.model, accuracy: null });
      }
    }
    testAccuracy ??= (await deps.modelTesting.latest(projectId, impulse.id))?.summary.accuracy ?? null;
  }
  return {
    samples: {
      count: samples.length,
      digest: digest(samples.map((s) => [s.id, s.category, s.label, s.sha256])),
      blobs: [...new Set(samples.map((s) => s.sha256))].sort(),
    },
    impulses: digest(impulses),
    features: [...features].sort(),
    models,
    trainingAccuracy: models.find((m) => m.accuracy !== null)?.accuracy ?? null,
    testAccuracy,
  };
}
