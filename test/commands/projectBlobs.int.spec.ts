// Which blobs a project holds besides its samples, read from its streams: blocks an impulse no longer
// has and ids only issued count too; what another live project's records name, superseded or not,
// is held elsewhere, and a fully deleted project's records are not.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProjectBlobs, derivedBlobsOf } from '../../commands/projects/projectBlobs';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const sha = (c: string) => c.repeat(64);
const metadata = { actor: 'system:test', correlationId: 'test', time: new Date().toISOString() };

async function append(events: SqliteEventStore, stream: string, type: string, data: Record<string, unknown>): Promise<void> {
  await events.appendToStream(stream, [{ id: randomUUID(), type, data, metadata }], 'any');
}

const block = (id: number) => ({ id, name: `b${id}` });
const impulse = (projectId: number, dsp: number[], learn: number[]) => ({ projectId, impulseId: 1, inputBlocks: [], dspBlocks: dsp.map(block), learnBlocks: learn.map(block), postProcessingBlocks: [] });

describe('the blobs derived from a project', () => {
  it('finds those of blocks since removed, of issued ids, and of superseded records', async () => {
    const events = SqliteEventStore.open(':memory:');
    // Block 2 (dsp) and 3 (learn) were replaced by 5 and 6; id 9 was only issued.
    await append(events, 'impulses-1', 'ImpulseCreated', impulse(1, [2], [3]));
    await append(events, 'impulses-1', 'ImpulseBlocksReplaced', impulse(1, [5], [6]));
    await append(events, 'impulses-1', 'BlockIdIssued', { projectId: 1, blockId: 9 });
    await append(events, 'dsp-features-1-2', 'DspFeaturesGenerated', { categories: { training: { x: sha('1'), y: sha('2'), raw: sha('3') }, testing: { x: sha('4'), y: sha('5') } }, metadata: sha('6'), explorer: null, importance: sha('7') });
    await append(events, 'keras-1-3', 'KerasModelTrained', { model: sha('8'), features: [{ x: sha('1'), y: sha('2') }] });
    await append(events, 'keras-1-3', 'KerasModelTrained', { model: sha('9'), features: [] });
    await append(events, 'anomaly-1-9', 'AnomalyModelTrained', { model: sha('a'), features: [{ x: sha('b') }] });
    await append(events, 'model-testing-1', 'ModelTested', { results: sha('c') });
    await append(events, 'deployment-1', 'DeploymentBuilt', { artifact: sha('d'), models: [{ model: sha('9') }] });
    // Another project's streams are not this one's.
    await append(events, 'keras-2-3', 'KerasModelTrained', { model: sha('e'), features: [] });
    expect([...(await derivedBlobsOf(events, 1))].sort()).toEqual([...'123456789abcd'].map(sha).sort());
    expect([...(await derivedBlobsOf(events, 3))]).toEqual([]);
    await events.close();
  });

  it('counts content as held elsewhere by another live project\'s records, superseded included, a sample or a photo', async () => {
    const events = SqliteEventStore.open(':memory:');
    await append(events, 'deployment-1', 'DeploymentBuilt', { artifact: sha('1'), models: [] });
    await append(events, 'deployment-2', 'DeploymentBuilt', { artifact: sha('1'), models: [] });
    await append(events, 'deployment-2', 'DeploymentBuilt', { artifact: sha('2'), models: [] });
    await append(events, 'deployment-3', 'DeploymentBuilt', { artifact: sha('5'), models: [] });
    const live = [1, 2];
    const blobs = new ProjectBlobs({
      events,
      samples: { contentsOf: async () => [sha('3')], referencedOutside: async (_id, s) => s === sha('3') },
      liveProjectIds: async () => live,
      isUserPhoto: async (s) => s === sha('4'),
      tunerRuns: { coordinatorJobIds: async () => [] },
    });
    expect((await blobs.contentsOf(1)).sort()).toEqual([sha('1'), sha('3')].sort());
    // Project 3 is fully deleted: its records hold nothing any more.
    const asked = [1, 2, 3, 4, 5, 6].map((n) => sha(String(n)));
    expect([...(await blobs.usedElsewhere(1, asked))].sort()).toEqual([sha('1'), sha('2'), sha('3'), sha('4')].sort());
    // The project's own records do not count as elsewhere.
    expect([...(await blobs.usedElsewhere(2, [sha('2')]))]).toEqual([]);
    await events.close();
  });
  it('counts what a version covers (its samples\', features\' and models\' blobs) as the project\'s, and as held elsewhere by another live project\'s version', async () => {
    const events = SqliteEventStore.open(':memory:');
    const contents = (samples: string[], features: string[], model: string) => ({
      samples: { count: samples.length, digest: sha('0'), blobs: samples }, impulses: sha('0'), features, models: [{ learnId: 3, type: 'keras', model, accuracy: null }], trainingAccuracy: null, testAccuracy: null,
    });
    await append(events, 'versions-1', 'VersionCreated', { projectId: 1, versionId: 10, contents: contents([sha('1')], [sha('2')], sha('3')) });
    await append(events, 'versions-2', 'VersionCreated', { projectId: 2, versionId: 11, contents: contents([sha('4')], [], sha('5')) });
    expect([...(await derivedBlobsOf(events, 1))].sort()).toEqual([sha('1'), sha('2'), sha('3')].sort());
    const blobs = new ProjectBlobs({ events, samples: { contentsOf: async () => [], referencedOutside: async () => false }, liveProjectIds: async () => [1, 2], isUserPhoto: async () => false, tunerRuns: { coordinatorJobIds: async () => [] } });
    expect([...(await blobs.usedElsewhere(1, [sha('1'), sha('4'), sha('5'), sha('6')]))].sort()).toEqual([sha('4'), sha('5')].sort());
    await events.close();
  });

  it('counts the models its tuner runs\' trials trained as the project\'s, and as held elsewhere by another live project\'s trial', async () => {
    const events = SqliteEventStore.open(':memory:');
    const finished = (projectId: number, coordinatorJobId: number, modelSha256: string | null) => ({ projectId, coordinatorJobId, trial: 0, status: modelSha256 ? 'completed' : 'failed', modelSha256 });
    await append(events, 'tuner-run-1-70', 'TunerTrialFinished', finished(1, 70, sha('1')));
    await append(events, 'tuner-run-1-71', 'TunerTrialFinished', finished(1, 71, sha('2')));
    await append(events, 'tuner-run-1-71', 'TunerTrialFinished', finished(1, 71, null));
    // Written before trials recorded their model.
    await append(events, 'tuner-run-1-71', 'TunerTrialFinished', { projectId: 1, coordinatorJobId: 71, trial: 1, status: 'failed' });
    await append(events, 'tuner-run-2-80', 'TunerTrialFinished', finished(2, 80, sha('3')));
    const runs: Record<number, number[]> = { 1: [70, 71], 2: [80] };
    expect([...(await derivedBlobsOf(events, 1, [70, 71]))].sort()).toEqual([sha('1'), sha('2')].sort());
    const blobs = new ProjectBlobs({ events, samples: { contentsOf: async () => [], referencedOutside: async () => false }, liveProjectIds: async () => [1, 2], isUserPhoto: async () => false, tunerRuns: { coordinatorJobIds: async (id) => runs[id] ?? [] } });
    expect((await blobs.contentsOf(1)).sort()).toEqual([sha('1'), sha('2')].sort());
    expect([...(await blobs.usedElsewhere(1, [sha('1'), sha('3')]))]).toEqual([sha('3')]);
    await events.close();
  });
});
