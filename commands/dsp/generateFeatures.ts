// The generate-features job (dsp-reference 11): every live training then testing sample of the
// project, windowed by the impulse's input block and run through its DSP block in the thread pool
// (one pool task per sample: decode, resample, window, block), written as float32 X and y .npy per
// category and the metadata JSON to the blob store, and recorded by a DspFeaturesGenerated event.
//
// Choices:
// * A sample that gives no window (no label, a missing axis, too short without zero padding, values
//   the block refuses, an image or video in a time-series impulse, a time series in an image one, an
//   image that cannot be decoded) is skipped with a warning naming it and why, and listed in the
//   event: one bad upload should not cost the features of all the others, and the log says what was
//   left out. The job fails only when no window at all is left.
// * Memory: one sample's bytes and features at a time; X and y are written row by row to temporary
//   files (npy.ts patches the row count into the header at the end) and stored as blobs from there.
// * Raw windows (`dsp-data/{dspId}/x/{category}?raw=true`) are stored with the results, as a float32
//   .npy blob per category named in the event like X and y, rather than recomputed on request from
//   the log position the result names: the samples may be deleted or relabelled since, so a recompute
//   would need the whole sample history replayed to that position, and would put a job's worth of
//   decoding and resampling behind a GET. Stored, the windows are exactly those the features came
//   from, and the GET is a blob stream. The pool task appends each window to a temporary file as it
//   runs the block (RawWindowFile in dspPoolTasks.ts), so neither the thread nor the job holds more
//   than before; the cost is disk, about windowSize / windowIncrease times the samples' size.
// * normalize-channel-standard-scaler: fitted on training rows as they are written; training X is then
//   rewritten scaled from its temporary file, testing rows are scaled as they come (training runs first).
// * Feature explorer (unless skipFeatureExplorer) and importance (when asked, with ≥ 2 classes and a
//   block that has it): seeded reservoirs fed while X is written, so they hold a bounded sample; the
//   UMAP and the forests run in the pool; each stored as one JSON blob named in the event.
// * The window -> DSP -> rows core is sampleFeatureRows.ts, on an impulse specification: a tuner trial
//   runs the same core on the impulse it tries, in memory.
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { classList, DspMetadataBuilder } from '../../domain/dsp/dspMetadata';
import { dspFeaturesDecider } from '../../domain/dsp/dspFeaturesDecider';
import { dspFeaturesStream, FEATURE_CATEGORIES, type FeatureArtifacts, type FeatureCategory, type GenerateFeaturesParameters } from '../../domain/dsp/dspFeaturesEvents';
import { explorerCapacity, WindowReservoir, type ExplorerWindow, type FeatureExplorer } from '../../domain/dsp/featureExplorer';
import { ImportanceSampler, type FeatureImportanceResponse } from '../../domain/dsp/featureImportance';
import { featuresFingerprint } from '../../domain/dsp/featuresFingerprint';
import { npyHeader, NpyWriter, npyRows, type NpySink } from '../../domain/dsp/npy';
import { standardize, StandardScalerFit, type StandardScaler } from '../../domain/dsp/standardScaler';
import { expectedImageWindowCount, expectedWindowCount } from '../../domain/dsp/windows';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { featureScratchPrefix } from './featureScratchFolders';
import { DSP_POOL_TASKS, featureSource, SampleFeatureReader } from './sampleFeatureRows';

export { commonFrequency, DSP_POOL_TASKS, readAllBytes, windowSampleOf } from './sampleFeatureRows';

export interface GenerateFeaturesDeps {
  events: EventStore;
  blobs: BlobStore;
  impulses: { withDspBlock(projectId: number, dspId: number): Promise<ImpulseDocument | null> };
  samples: { ids(projectId: number, category: FeatureCategory): Promise<SampleDocument[]> };
}

/** The job's parameters as requested (validated by the endpoint; read defensively here). */
export function generateFeaturesParameters(p: Record<string, unknown>): GenerateFeaturesParameters {
  return {
    dspId: Number(p.dspId),
    calculateFeatureImportance: p.calculateFeatureImportance === true,
    skipFeatureExplorer: p.skipFeatureExplorer === true,
    normalizeData: p.normalizeData === 'normalize-channel-standard-scaler' ? 'normalize-channel-standard-scaler' : 'none',
  };
}

/** An NpySink on a file: appends in order, and the header overwrite at offset 0. */
class FileSink implements NpySink {
  private position = 0;
  constructor(private readonly file: FileHandle) {}
  async write(chunk: Uint8Array): Promise<void> {
    await this.file.write(chunk, 0, chunk.length, this.position);
    this.position += chunk.length;
  }
  async writeAt(position: number, chunk: Uint8Array): Promise<void> {
    await this.file.write(chunk, 0, chunk.length, position);
  }
}

/** The temporary files of one run: each handle is closed once, and all of them when the run ends however it ends. */
class TempFiles {
  private readonly open = new Set<FileHandle>();
  constructor(readonly dir: string) {}

  async npy(name: string, columns: number | null): Promise<{ path: string; writer: NpyWriter; file: FileHandle }> {
    const p = path.join(this.dir, name);
    const file = await open(p, 'w');
    this.open.add(file);
    return { path: p, file, writer: new NpyWriter(new FileSink(file), '<f4', columns) };
  }

  async close(file: FileHandle): Promise<void> {
    if (this.open.delete(file)) await file.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((f) => this.close(f).catch(() => undefined)));
  }
}

export function generateFeaturesRunner(deps: GenerateFeaturesDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A generate-features job belongs to a project');
    const parameters = generateFeaturesParameters(job.parameters);
    const impulse = await deps.impulses.withDspBlock(projectId, parameters.dspId);
    if (!impulse) throw new Error(`DSP block ${parameters.dspId} is no longer part of an impulse of this project`);
    const byCategory = {
      training: [...(await deps.samples.ids(projectId, 'training'))].sort((a, b) => a.id - b.id),
      testing: [...(await deps.samples.ids(projectId, 'testing'))].sort((a, b) => a.id - b.id),
    };
    const all = [...byCategory.training, ...byCategory.testing];
    const source = featureSource(impulse, parameters.dspId, all);
    const { dsp, windowing } = source;
    const impulseFingerprint = featuresFingerprint(impulse, parameters.dspId)!;
    const classes = classList(all.map((s) => ({ label: s.label, structuredLabels: s.structuredLabels ?? [] })));
    const metadata = new DspMetadataBuilder({
      dspConfig: dsp.config,
      classes,
      axes: dsp.dspBlock.axes,
      // An image window has no time: the metadata's window fields are 0, as for no windowing.
      windowing: windowing.type === 'image' ? { windowSizeMs: 0, windowIncreaseMs: 0, padZeros: false, frequencyHz: 0 } : windowing.windowing,
      interleaved: dsp.dspBlock.type === 'raw',
    });
    const expected = windowing.type === 'image' ? expectedImageWindowCount(all) : expectedWindowCount(all.filter((s) => s.kind !== 'image' && s.kind !== 'video'), windowing.windowing);
    const normalize = parameters.normalizeData === 'normalize-channel-standard-scaler';
    // Seeded by the block, so a rerun on the same data draws the same explorer and forests.
    const seed = parameters.dspId;
    const reservoirs: Partial<Record<FeatureCategory, WindowReservoir<ExplorerWindow>>> = {};
    const importanceWanted = parameters.calculateFeatureImportance && dsp.block.hasFeatureImportance && classes.length >= 2;
    let importanceSampler: ImportanceSampler | undefined;
    job.log(`Generating features for ${dsp.dspBlock.type} block ${dsp.dspBlock.id} ("${dsp.dspBlock.name}"): ${byCategory.training.length} training and ${byCategory.testing.length} testing samples, about ${expected} windows`);

    const dir = await mkdtemp(featureScratchPrefix(job.jobId));
    const temp = new TempFiles(dir);
    try {
      const reader = new SampleFeatureReader(deps, job, source);
      let processed = 0;
      let featureCount: number | undefined;
      let scalerFit: StandardScalerFit | undefined;
      let scaler: StandardScaler | undefined;
      let sourcePosition = '';
      let rawColumns: number | undefined;
      const artifacts: Partial<Record<FeatureCategory, FeatureArtifacts>> = {};
      for (const category of FEATURE_CATEGORIES) {
        let x: Awaited<ReturnType<TempFiles["npy"]>> | undefined;
        const y = await temp.npy(`y_${category}.npy`, null);
        // The raw windows' float32 body, appended by the pool tasks; its header is added when it is stored.
        const rawPath = path.join(dir, `raw_${category}.f32`);
        await writeFile(rawPath, new Uint8Array());
        for (const sample of byCategory[category]) {
          job.signal.throwIfAborted();
          if (sample._position > sourcePosition) sourcePosition = sample._position;
          const result = await reader.read(sample, rawPath);
          if (!result) continue;
          rawColumns ??= result.rawColumns;
          featureCount = result.featureCount;
          x ??= await temp.npy(`x_${category}.npy`, featureCount);
          if (category === 'training' && normalize) scalerFit ??= new StandardScalerFit(featureCount);
          const reservoir = parameters.skipFeatureExplorer ? undefined : (reservoirs[category] ??= new WindowReservoir<ExplorerWindow>(explorerCapacity(featureCount), seed));
          if (category === 'training' && importanceWanted) importanceSampler ??= new ImportanceSampler(classes.length, seed);
          for (let i = 0; i < result.labels.length; i++) {
            const row = result.features.subarray(i * featureCount, (i + 1) * featureCount);
            metadata.addWindow(sample.id, { features: row, labels: result.blockLabels, outputConfig: result.outputConfig, fftUsed: result.fftUsed });
            if (category === 'training') scalerFit?.add(row);
            const stored = category === 'testing' && scaler ? standardize(scaler, row) : row;
            const yValue = metadata.yOf(result.labels[i]!);
            await x.writer.writeRow(stored);
            await y.writer.writeRow(yValue);
            const place = result.windows[i]!;
            reservoir?.offer(() => ({ features: Array.from(stored), y: yValue, yLabel: result.labels[i]!, sample: { id: sample.id, name: sample.fileName ?? String(sample.id), startMs: place.startMs, endMs: place.endMs } }));
            if (category === 'training') importanceSampler?.offer(yValue, row);
          }
          processed += result.labels.length;
          job.log(`Processed ${processed}/${expected} windows`);
        }
        // A category without windows still gets its (empty) files, with the feature count as columns.
        x ??= await temp.npy(`x_${category}.npy`, featureCount ?? 0);
        await x.writer.close();
        await y.writer.close();
        await temp.close(x.file);
        await temp.close(y.file);
        let xPath = x.path;
        if (category === 'training' && scalerFit && scalerFit.count > 0) {
          scaler = scalerFit.result();
          xPath = await rewriteScaled(temp, x.path, scaler, featureCount!);
          job.log(`Standard scaler fitted on ${scaler.count} training windows`);
        }
        const xBlob = await deps.blobs.put(createReadStream(xPath));
        const yBlob = await deps.blobs.put(createReadStream(y.path));
        const rawBlob = await deps.blobs.put(rawWindowsNpy(rawPath, y.writer.rows, rawColumns ?? 0));
        artifacts[category] = { x: xBlob.sha256, y: yBlob.sha256, raw: rawBlob.sha256, windowCount: y.writer.rows };
      }
      if (metadata.windowCount === 0 || featureCount === undefined) throw new Error('No sample gave a window: there are no features to generate (see the skipped samples above)');
      const now = new Date();
      const meta = metadata.build(now);
      const metaBlob = await deps.blobs.put(Buffer.from(JSON.stringify(meta)));
      // Training rows entered the reservoir before the scaler was fitted: scale the kept ones as X is.
      const scaledRows = (rows: number[][]) => (scaler ? rows.map((r) => Array.from(standardize(scaler!, r))) : rows);
      let explorerBlob: string | null = null;
      if (!parameters.skipFeatureExplorer) {
        job.log('Building the feature explorer');
        const explorer: Partial<Record<FeatureCategory, FeatureExplorer>> = {};
        for (const category of FEATURE_CATEGORIES) {
          const reservoir = reservoirs[category];
          const kept = reservoir?.items() ?? [];
          let windows = kept;
          if (category === 'training' && scaler) {
            const scaled = scaledRows(kept.map((k) => k.features));
            windows = kept.map((w, i) => ({ ...w, features: scaled[i]! }));
          }
          explorer[category] = await job.pool.run<FeatureExplorer>(
            { module: DSP_POOL_TASKS, name: 'explorerTask', input: { windows, total: reservoir?.seen ?? 0, reduce: dsp.block.dimensionalityReduction, seed } },
            { signal: job.signal },
          );
        }
        explorerBlob = (await deps.blobs.put(Buffer.from(JSON.stringify(explorer)))).sha256;
      }
      let importanceBlob: string | null = null;
      if (parameters.calculateFeatureImportance && !importanceWanted) {
        job.log(`Feature importance skipped: ${dsp.block.hasFeatureImportance ? 'it needs at least two classes' : `the ${dsp.dspBlock.type} block does not have it`}`, 'warn');
      } else if (importanceSampler) {
        job.log('Calculating feature importance');
        const { rows, ys } = importanceSampler.sample();
        const importance = await job.pool.run<FeatureImportanceResponse>(
          { module: DSP_POOL_TASKS, name: 'importanceTask', input: { rows: scaledRows(rows), ys, classes, featureLabels: meta.featureLabels, seed } },
          { signal: job.signal },
        );
        importanceBlob = (await deps.blobs.put(Buffer.from(JSON.stringify(importance)))).sha256;
      }
      job.signal.throwIfAborted();
      await handleCommand(
        deps.events,
        dspFeaturesStream(projectId, parameters.dspId),
        dspFeaturesDecider,
        {
          type: 'RecordDspFeatures',
          data: {
            projectId,
            impulseId: impulse.id,
            dspId: parameters.dspId,
            jobId: job.jobId,
            parameters,
            dspConfig: dsp.config,
            implementationVersion: dsp.dspBlock.implementationVersion,
            categories: { training: artifacts.training!, testing: artifacts.testing! },
            metadata: metaBlob.sha256,
            explorer: explorerBlob,
            importance: importanceBlob,
            featureCount,
            windowCount: metadata.windowCount,
            classes,
            skippedSampleIds: reader.skipped,
            sourcePosition,
            scaler: scaler ? { mean: scaler.mean, scale: scaler.scale } : null,
            impulseFingerprint,
            generated: now.toISOString(),
          },
        },
        systemContext('generate-features', now),
      );
      const skipped = reader.skipped;
      job.log(`Features generated: ${metadata.windowCount} windows of ${featureCount} features${skipped.length > 0 ? `, ${skipped.length} sample(s) skipped` : ''}`);
    } finally {
      await temp.closeAll();
      await rm(dir, { recursive: true, force: true });
    }
  };
}

/** The raw windows' .npy: the header for windows × values, then the body the pool tasks appended. */
async function* rawWindowsNpy(body: string, rows: number, columns: number): AsyncGenerator<Uint8Array> {
  const { size } = await stat(body);
  if (size !== rows * columns * 4) throw new Error(`the raw windows file holds ${size} bytes, expected ${rows} windows of ${columns} float32 values`);
  yield npyHeader('<f4', [rows, columns]);
  for await (const chunk of createReadStream(body)) yield chunk as Buffer;
}

/** Training X again, each row standardized, from its unscaled temporary file. */
async function rewriteScaled(temp: TempFiles, from: string, scaler: StandardScaler, columns: number): Promise<string> {
  const out = await temp.npy('x_training_scaled.npy', columns);
  try {
    for await (const { row } of npyRows(createReadStream(from))) await out.writer.writeRow(standardize(scaler, row));
    await out.writer.close();
  } finally {
    await temp.close(out.file);
  }
  return out.path;
}
