// The blobs a project holds, for its full deletion: its samples' files and everything its jobs derived
// from them (features, trained models, tuner trials' models, model testing results, deployment builds), and what its
// versions cover (a version keeps the blobs it names, so a deleted sample or model still restores). Derived blobs are
// read from the project's event streams, not from the read models, which keep only the latest of
// each: superseded models and features are the same person's data and go too.
import type { DeploymentBuilt } from '../../domain/deployment/deploymentEvents';
import { deploymentStream } from '../../domain/deployment/deploymentEvents';
import { dspFeaturesStream, type DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import { impulsesStream, type ImpulseEvent } from '../../domain/impulse/impulseEvents';
import { anomalyStream, type AnomalyModelTrained } from '../../domain/learn/anomalyEvents';
import { kerasStream, type KerasModelTrained } from '../../domain/learn/kerasEvents';
import { modelTestingStream, type ModelTested } from '../../domain/learn/modelTestingEvents';
import { tunerRunStream, type TunerTrialFinished } from '../../domain/optimize/tunerRunEvents';
import { blobsOfVersion, versionsStream, type VersionCreated } from '../../domain/version/versionEvents';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';

const SHA256 = /^[0-9a-f]{64}$/;

/** The content addresses one record names (its own blobs and the inputs it was made from). */
export function blobsNamedBy(event: StoredEvent): string[] {
  const named = ((): (string | null | undefined)[] => {
    switch (event.type) {
      case 'DspFeaturesGenerated': {
        const d = event.data as DspFeaturesGenerated['data'];
        return [...Object.values(d.categories).flatMap((c) => [c.x, c.y, c.raw]), d.metadata, d.explorer, d.importance];
      }
      case 'KerasModelTrained': {
        const d = event.data as KerasModelTrained['data'];
        return [d.model, ...d.features.flatMap((f) => [f.x, f.y])];
      }
      case 'AnomalyModelTrained': {
        const d = event.data as AnomalyModelTrained['data'];
        return [d.model, ...d.features.map((f) => f.x)];
      }
      case 'ModelTested':
        return [(event.data as ModelTested['data']).results];
      case 'DeploymentBuilt': {
        const d = event.data as DeploymentBuilt['data'];
        return [d.artifact, ...d.models.map((m) => m.model)];
      }
      case 'TunerTrialFinished':
        return [(event.data as TunerTrialFinished['data']).modelSha256];
      case 'VersionCreated':
        return blobsOfVersion((event.data as VersionCreated['data']).contents);
      default:
        return [];
    }
  })();
  return named.filter((sha): sha is string => typeof sha === 'string' && SHA256.test(sha));
}

/** Every block id the project's impulses ever had or were issued: the keys of its per-block streams. */
async function blockIdsOf(events: EventStore, projectId: number): Promise<Set<number>> {
  const ids = new Set<number>();
  for (const stored of await events.readStream(impulsesStream(projectId))) {
    const event = stored as unknown as ImpulseEvent;
    if (event.type === 'ImpulseCreated' || event.type === 'ImpulseBlocksReplaced') {
      for (const block of [...event.data.dspBlocks, ...event.data.learnBlocks]) ids.add(block.id);
    } else if (event.type === 'BlockIdIssued') {
      ids.add(event.data.blockId);
    }
  }
  return ids;
}

/** The streams that name blobs derived from the project's samples; `tunerRunIds`: its tuner runs' coordinator jobs. */
async function derivedStreamsOf(events: EventStore, projectId: number, tunerRunIds: readonly number[]): Promise<string[]> {
  const perBlock = [...(await blockIdsOf(events, projectId))].flatMap((id) => [dspFeaturesStream(projectId, id), kerasStream(projectId, id), anomalyStream(projectId, id)]);
  return [modelTestingStream(projectId), deploymentStream(projectId), versionsStream(projectId), ...perBlock, ...tunerRunIds.map((id) => tunerRunStream(projectId, id))];
}

/** Every derived blob any record of the project ever named, superseded ones included. */
export async function derivedBlobsOf(events: EventStore, projectId: number, tunerRunIds: readonly number[] = []): Promise<Set<string>> {
  const found = new Set<string>();
  for (const stream of await derivedStreamsOf(events, projectId, tunerRunIds)) {
    for (const event of await events.readStream(stream)) for (const sha of blobsNamedBy(event)) found.add(sha);
  }
  return found;
}

export interface ProjectBlobsDeps {
  events: EventStore;
  samples: {
    /** The content addresses of a project's samples, deleted ones included. */
    contentsOf(projectId: number): Promise<string[]>;
    /** Whether a sample of another project (not fully deleted) is stored under this content address. */
    referencedOutside(projectId: number, sha256: string): Promise<boolean>;
  };
  /** Projects not fully deleted, those deleted and waiting included: their content is still held. */
  liveProjectIds(): Promise<number[]>;
  /** Whether a user's photo is stored under this content address. */
  isUserPhoto(sha256: string): Promise<boolean>;
  /**
   * The coordinator jobs of a project's tuner runs (the tunerRuns read model): their streams are
   * keyed by job ids, which no stream of the project lists.
   */
  tunerRuns: { coordinatorJobIds(projectId: number): Promise<number[]> };
}

/** What a project's full deletion sets aside and purges, and what of it must stay because others hold it. */
export class ProjectBlobs {
  constructor(private readonly deps: ProjectBlobsDeps) {}

  /** Every content address the project ever referenced: its samples' and the blobs derived from them. */
  async contentsOf(projectId: number): Promise<string[]> {
    const samples = await this.deps.samples.contentsOf(projectId);
    return [...new Set([...samples, ...(await derivedBlobsOf(this.deps.events, projectId, await this.deps.tunerRuns.coordinatorJobIds(projectId)))])];
  }

  /**
   * Of these contents, those something outside the project holds: a sample of another project, a
   * user photo, or a blob another live project's records name (content addressing: identical bytes,
   * such as the empty X of a category without samples, are one blob). The other projects' streams
   * are read once per call, and only while some content is not yet known to be held elsewhere.
   */
  async usedElsewhere(projectId: number, sha256s: readonly string[]): Promise<Set<string>> {
    const used = new Set<string>();
    for (const sha256 of sha256s) {
      if ((await this.deps.samples.referencedOutside(projectId, sha256)) || (await this.deps.isUserPhoto(sha256))) used.add(sha256);
    }
    let open = sha256s.filter((sha256) => !used.has(sha256));
    for (const other of await this.deps.liveProjectIds()) {
      if (open.length === 0) break;
      if (other === projectId) continue;
      const theirs = await derivedBlobsOf(this.deps.events, other, await this.deps.tunerRuns.coordinatorJobIds(other));
      for (const sha256 of open) if (theirs.has(sha256)) used.add(sha256);
      open = open.filter((sha256) => !used.has(sha256));
    }
    return used;
  }
}
