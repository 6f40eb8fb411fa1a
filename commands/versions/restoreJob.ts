// The restore job: writes a version of another project into this one (the target), through each
// aggregate's own decider, as new events whose metadata say where they came from (correlation
// `restore-{jobId}`, causation the version's VersionCreated event). Nothing is copied: samples, features
// and models name the same content-addressed blobs. Order: the plan (restorePlan.ts), the samples,
// the impulses with their DSP configs, each DSP block's features, then each learn block's settings
// and model, which names the restored features' positions so the target sees it as trained on them.
// Every command carries an id derived from (job, step), and every step finds its work done on a
// retry (a sample stream that exists, an impulse id that is live, a model or features recorded by
// this job), so a retried job stores nothing twice.
import { anomalyDecider } from '../../domain/learn/anomalyDecider';
import { anomalyStream, type AnomalyModelTrained, type AnomalySettingsChanged } from '../../domain/learn/anomalyEvents';
import { dspFeaturesDecider } from '../../domain/dsp/dspFeaturesDecider';
import { dspFeaturesStream, type DspFeaturesGenerated } from '../../domain/dsp/dspFeaturesEvents';
import { featuresFingerprint } from '../../domain/dsp/featuresFingerprint';
import { impulseDecider, type RestoredImpulse } from '../../domain/impulse/impulseDecider';
import { impulsesStream, type ImpulseBlocks } from '../../domain/impulse/impulseEvents';
import { kerasDecider } from '../../domain/learn/kerasDecider';
import { kerasStream, type KerasModelTrained, type KerasSettingsSet } from '../../domain/learn/kerasEvents';
import { kerasModeOf } from '../../domain/learn/kerasRegression';
import { checkSample } from '../../domain/sample/checkSample';
import { sampleDecider } from '../../domain/sample/sampleDecider';
import { sampleStream, type SampleIngested } from '../../domain/sample/sampleEvents';
import type { DspConfigValues } from '../../domain/impulse/dspConfig';
import type { Decider, DomainEvent } from '../../domain/shared/decider';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { positionKey } from '../../projections/projection';
import type { SampleQueries } from '../../projections/samples/sampleQueries';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { stillReads, type RestoreAccessDeps, type RestoreReader } from './restoreAccess';
import { planRestore, readSource, readVersion, type RestorePlan, type RestoreSource } from './restorePlan';
import type { VersionJobDeps } from './versionJob';

export const RESTORE_JOB = 'restore';

export interface RestoreJobParameters {
  sourceProjectId: number;
  versionId: number;
  /** The target's plan limit on impulses (the API's), so a restore does not exceed it. */
  maxImpulses: number;
  /** Who read the source when asking: checked again when the job starts. */
  reader: RestoreReader;
}

export interface RestoreJobDeps extends VersionJobDeps, RestoreAccessDeps {
  ids: IdAllocator;
  /** The live read models: the target must hold no samples; neither project may be deleted. */
  liveSamples: Pick<SampleQueries, 'count'>;
}

/** Maps the source's ids to the target's. */
const mapping = (pairs: readonly [number, number][]) => {
  const map = new Map(pairs);
  return (id: number): number => {
    const to = map.get(id);
    if (to === undefined) throw new Error(`The restore's plan has no id for ${id}`);
    return to;
  };
};

/** The stream's events up to the version's position: the aggregate as the version saw it. */
async function upTo(deps: RestoreJobDeps, streamId: string, position: bigint): Promise<StoredEvent[]> {
  return (await deps.events.readStream(streamId)).filter((e) => e.position <= position);
}

function lastOf<T extends string, D extends Record<string, unknown>>(events: readonly StoredEvent[], type: T): StoredEvent<T, D> | undefined {
  return events.filter((e) => e.type === type).at(-1) as StoredEvent<T, D> | undefined;
}

function mapBlocks(impulse: ImpulseDocument, block: (id: number) => number): ImpulseBlocks {
  return {
    inputBlocks: impulse.inputBlocks.map((b) => ({ ...b, id: block(b.id) })),
    dspBlocks: impulse.dspBlocks.map((b) => ({ ...b, id: block(b.id), input: block(b.input) })),
    learnBlocks: impulse.learnBlocks.map((b) => ({ ...b, id: block(b.id), dsp: b.dsp.map(block) })),
    postProcessingBlocks: impulse.postProcessingBlocks.map((b) => ({ ...b, id: block(b.id) })),
  };
}

class RestoreWriter {
  private readonly block: (id: number) => number;
  private readonly impulse: (id: number) => number;
  private readonly sample: (id: number) => number;
  private readonly position: bigint;
  /** The restored features by the target's DSP block id: their event's position and source position. */
  private readonly features = new Map<number, { position: string; sourcePosition: string }>();

  constructor(
    private readonly deps: RestoreJobDeps,
    private readonly source: RestoreSource,
    private readonly plan: RestorePlan,
    private readonly job: JobRunContext,
    private readonly now: Date,
  ) {
    this.block = mapping(plan.blockIds);
    this.impulse = mapping(plan.impulseIds);
    this.sample = mapping(plan.sampleIds);
    this.position = BigInt(plan.position);
  }

  private ctx(step: string): CommandContext {
    return { actor: `system:${RESTORE_JOB}`, correlationId: `restore-${this.job.jobId}`, causationId: this.source.version.id, commandId: `restore-${this.job.jobId}-${step}`, now: this.now };
  }

  private send<C, E extends DomainEvent, S>(streamId: string, decider: Decider<C, E, S>, command: C, step: string, options: { newStream?: boolean } = {}) {
    return handleCommand(this.deps.events, streamId, decider, command, this.ctx(step), options);
  }

  async samples(): Promise<void> {
    let done = 0;
    for (const [from, to] of this.plan.sampleIds) {
      this.job.signal.throwIfAborted();
      const [existing] = await this.deps.events.readStream(sampleStream(to), { maxCount: 1 });
      // Written by an earlier attempt of this job; any other sample under the planned id is a fault, never overwritten.
      if (existing && (existing.data.projectId !== this.plan.projectId || existing.metadata.correlationId !== `restore-${this.job.jobId}`)) {
        throw new Error(`Sample id ${to}, planned for this restore, holds another sample`);
      }
      if (!existing) {
        const [ingested] = await this.deps.events.readStream(sampleStream(from), { maxCount: 1 });
        if (ingested?.type !== 'SampleIngested') throw new Error(`Sample ${from} of the version has no record`);
        const { sampleId: _, ingested: at, ...description } = ingested.data as SampleIngested['data'];
        const sample = checkSample({ ...description, projectId: this.plan.projectId });
        await this.send(sampleStream(to), sampleDecider, { type: 'IngestSample', data: { ...sample, sampleId: to, ingested: at } }, `sample-${to}`, { newStream: true });
      }
      if (++done % 500 === 0) this.job.log(`${done} of ${this.plan.sampleIds.length} samples restored`);
    }
  }

  async impulses(): Promise<void> {
    const impulses: RestoredImpulse[] = this.source.impulses.map((i) => ({
      impulseId: this.impulse(i.id),
      name: i.name,
      type: i.type,
      tags: i.tags,
      blocks: mapBlocks(i, this.block),
      dspConfigs: Object.entries(i.dspConfigs).map(([dspId, config]): [number, DspConfigValues] => [this.block(Number(dspId)), config]),
    }));
    const params = this.job.parameters as unknown as RestoreJobParameters;
    await this.send(impulsesStream(this.plan.projectId), impulseDecider, { type: 'RestoreImpulses', data: { projectId: this.plan.projectId, impulses, maxImpulses: params.maxImpulses, now: this.now } }, 'impulses');
  }

  /** The event this job recorded in the stream (now or on an earlier attempt). */
  private async recordedByThisJob(streamId: string, type: string): Promise<StoredEvent> {
    const found = (await this.deps.events.readStream(streamId)).filter((e) => e.type === type && e.data.jobId === this.job.jobId).at(-1);
    if (!found) throw new Error(`${streamId} holds no ${type} of restore job ${this.job.jobId}`);
    return found;
  }

  async featuresOf(impulse: ImpulseDocument): Promise<void> {
    const sourceProjectId = this.source.version.data.projectId;
    const current = new DspFeaturesQueries(this.source.store);
    // The restored impulse, for the fingerprints that make its features current.
    const target = { ...mapBlocks(impulse, this.block), dspConfigs: Object.fromEntries(Object.entries(impulse.dspConfigs).map(([id, c]) => [String(this.block(Number(id))), c])) };
    const known = new Set(this.plan.sampleIds.map(([from]) => from));
    for (const block of impulse.dspBlocks) {
      // Only features the version covers: current for the block as it was.
      if (!(await current.current(sourceProjectId, block.id))) continue;
      const record = lastOf<'DspFeaturesGenerated', DspFeaturesGenerated['data']>(await upTo(this.deps, dspFeaturesStream(sourceProjectId, block.id), this.position), 'DspFeaturesGenerated');
      if (!record) throw new Error(`DSP block ${block.id} of the version has current features but no record of them`);
      const dspId = this.block(block.id);
      const fingerprint = featuresFingerprint(target, dspId);
      const data: DspFeaturesGenerated['data'] = {
        ...record.data,
        projectId: this.plan.projectId,
        impulseId: this.impulse(impulse.id),
        dspId,
        jobId: this.job.jobId,
        parameters: { ...record.data.parameters, dspId },
        skippedSampleIds: record.data.skippedSampleIds.filter((id) => known.has(id)).map(this.sample),
        ...(fingerprint === null ? {} : { impulseFingerprint: fingerprint }),
      };
      const stream = dspFeaturesStream(this.plan.projectId, dspId);
      await this.send(stream, dspFeaturesDecider, { type: 'RecordDspFeatures', data }, `features-${dspId}`);
      const stored = await this.recordedByThisJob(stream, 'DspFeaturesGenerated');
      this.features.set(dspId, { position: positionKey(stored.position), sourcePosition: record.data.sourcePosition });
    }
  }

  /** Where the model's features now are: the restored record's position when the block's features were restored. */
  private trainedOn<F extends { dspId: number; position?: string }>(features: readonly F[]): F[] {
    return features.map((f) => {
      const dspId = this.block(f.dspId);
      const restored = this.features.get(dspId);
      return { ...f, dspId, ...(restored ? { position: restored.position } : {}) };
    });
  }

  async modelsOf(impulse: ImpulseDocument): Promise<void> {
    const sourceProjectId = this.source.version.data.projectId;
    for (const block of impulse.learnBlocks) {
      const learnId = this.block(block.id);
      if (kerasModeOf(block.type) !== undefined) {
        const events = await upTo(this.deps, kerasStream(sourceProjectId, block.id), this.position);
        const settings = lastOf<'KerasSettingsSet', KerasSettingsSet['data']>(events, 'KerasSettingsSet');
        const model = lastOf<'KerasModelTrained', KerasModelTrained['data']>(events, 'KerasModelTrained');
        const stream = kerasStream(this.plan.projectId, learnId);
        if (settings && (await this.deps.events.readStream(stream)).every((e) => e.type !== 'KerasSettingsSet')) {
          await this.send(stream, kerasDecider, { type: 'SetKerasSettings', data: { projectId: this.plan.projectId, learnId, change: settings.data.settings, now: this.now } }, `keras-settings-${learnId}`);
        }
        if (model) {
          const data: KerasModelTrained['data'] = { ...model.data, projectId: this.plan.projectId, learnId, jobId: this.job.jobId, features: this.trainedOn(model.data.features) };
          await this.send(stream, kerasDecider, { type: 'RecordKerasModel', data }, `keras-model-${learnId}`);
        }
      } else if (block.type === 'anomaly') {
        const events = await upTo(this.deps, anomalyStream(sourceProjectId, block.id), this.position);
        const stream = anomalyStream(this.plan.projectId, learnId);
        const changes = events.filter((e) => e.type === 'AnomalySettingsChanged').map((e) => e.data as AnomalySettingsChanged['data']);
        if (changes.length > 0 && (await this.deps.events.readStream(stream)).every((e) => e.type !== 'AnomalySettingsChanged')) {
          // The settings as the changes left them, as one change.
          const merged = Object.assign({}, ...changes.map(({ axes, clusterCount, minimumConfidenceRating }) => ({ ...(axes ? { axes } : {}), ...(clusterCount === undefined ? {} : { clusterCount }), ...(minimumConfidenceRating === undefined ? {} : { minimumConfidenceRating }) }))) as Partial<AnomalySettingsChanged['data']>;
          await this.send(stream, anomalyDecider, { type: 'ChangeAnomalySettings', data: { ...merged, projectId: this.plan.projectId, learnId, changed: this.now.toISOString() } }, `anomaly-settings-${learnId}`);
        }
        const model = lastOf<'AnomalyModelTrained', AnomalyModelTrained['data']>(events, 'AnomalyModelTrained');
        if (model) {
          const data: AnomalyModelTrained['data'] = { ...model.data, projectId: this.plan.projectId, learnId, impulseId: this.impulse(impulse.id), jobId: this.job.jobId, features: this.trainedOn(model.data.features) };
          await this.send(stream, anomalyDecider, { type: 'RecordAnomalyModel', data }, `anomaly-model-${learnId}`);
        }
      }
    }
  }
}

export function restoreJobRunner(deps: RestoreJobDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A restore job belongs to a project');
    const params = job.parameters as unknown as RestoreJobParameters;
    if (!(await stillReads(deps, params.sourceProjectId, params.reader))) {
      throw new Error(`Version ${params.versionId} of project ${params.sourceProjectId} is no longer readable by whoever asked for this restore: nothing restored`);
    }
    const version = await readVersion(deps, params.sourceProjectId, params.versionId);
    if (!(await deps.projects.byId(projectId))) throw new Error(`Project ${projectId} was deleted since the restore was asked for: nothing restored`);
    job.log(`Restoring version ${version.data.number} (id ${version.data.versionId}) of project ${params.sourceProjectId}, at log position ${version.data.position}`);
    const source = await readSource(deps, version, job.signal);
    const now = new Date();
    const plan = await planRestore(deps, source, { projectId, jobId: job.jobId }, { actor: `system:${RESTORE_JOB}`, correlationId: `restore-${job.jobId}`, causationId: version.id, commandId: `restore-${job.jobId}-plan`, now });
    const writer = new RestoreWriter(deps, source, plan, job, now);
    await writer.samples();
    job.signal.throwIfAborted();
    await writer.impulses();
    for (const impulse of source.impulses) await writer.featuresOf(impulse);
    for (const impulse of source.impulses) await writer.modelsOf(impulse);
    const c = version.data.contents;
    job.log(`Restored ${plan.sampleIds.length} samples (${c.samples.blobs.length} files), ${source.impulses.length} impulses, ${c.features.length} feature files and ${c.models.length} trained models; nothing was copied`);
  };
}
