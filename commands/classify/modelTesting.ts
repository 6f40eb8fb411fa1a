// The model-testing job (`classify`, JobsApi.startClassifyJob): every testing sample of the project
// classified as GET classify/{sampleId} classifies it (the impulse's spec built once at the start,
// each sample in the thread pool), the windows kept in one JSON blob (domain/learn/modelTestingResults.ts)
// and recorded by a ModelTested event naming it with a summary. A sample the impulse cannot take is
// skipped and named with why, in the log and the blob. Cancel aborts the pool task under way.
import { modelTestingDecider } from '../../domain/learn/modelTestingDecider';
import { modelTestingStream } from '../../domain/learn/modelTestingEvents';
import { testingAccuracy, type ModelTestingResults } from '../../domain/learn/modelTestingResults';
import { DomainError } from '../../domain/shared/errors';
import { BlobNotFoundError } from '../../stores/blobstore/blobStore';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { classifyStoredSample } from './classifySample';
import { buildImpulseRuntimeSpec, type ImpulseRuntimeSpecDeps } from './impulseRuntimeSpec';

export const MODEL_TESTING = 'classify';

export interface ModelTestingDeps extends ImpulseRuntimeSpecDeps {
  events: EventStore;
}

export function modelTestingRunner(deps: ModelTestingDeps): JobRunner {
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('A model testing job belongs to a project');
    const impulseId = typeof job.parameters.impulseId === 'number' ? job.parameters.impulseId : undefined;
    const built = await buildImpulseRuntimeSpec(deps, projectId, impulseId);
    const { spec } = built;
    const samples = [...(await deps.samples.ids(projectId, 'testing'))].sort((a, b) => a.id - b.id);
    job.log(`Classifying ${samples.length} testing samples with impulse ${spec.impulseId} (learn blocks ${spec.learnBlocks.map((l) => `${l.id} "${l.name}"`).join(', ')})`);
    const results: ModelTestingResults = {
      v: 1,
      impulseId: spec.impulseId,
      learnBlocks: built.impulse.learnBlocks.filter((b) => spec.learnBlocks.some((l) => l.id === b.id)),
      thresholds: spec.learnBlocks.map((l) => ({ learnId: l.id, type: l.type, ...(l.type === 'keras' && l.mode === 'regression' ? { mode: l.mode } : {}), minimumConfidenceRating: l.minimumConfidenceRating })),
      classes: spec.learnBlocks.find((l) => l.type === 'keras')?.classes ?? [],
      frequencyHz: spec.frequencyHz,
      samples: [],
      skipped: [],
    };
    let windowCount = 0;
    for (const [i, sample] of samples.entries()) {
      job.signal.throwIfAborted();
      try {
        const windows = await classifyStoredSample({ blobs: deps.blobs, pool: job.pool }, built, sample, { signal: job.signal });
        results.samples.push({ sampleId: sample.id, windows });
        windowCount += windows.length;
      } catch (error) {
        // A refusal names the sample and the problem, and so does a lost file; anything else fails the job.
        const reason = error instanceof BlobNotFoundError ? `Sample ${sample.id} ("${sample.fileName ?? sample.id}"): its file is missing from the blob store` : error instanceof DomainError && error.status === 400 ? error.message : undefined;
        if (reason === undefined) throw error;
        results.skipped.push({ sampleId: sample.id, reason });
        job.log(`Skipped ${reason}`, 'warn');
      }
      job.log(`Classified ${i + 1}/${samples.length} samples (${windowCount} windows)`);
    }
    job.signal.throwIfAborted();
    const accuracy = testingAccuracy(results);
    const blob = await deps.blobs.put(Buffer.from(JSON.stringify(results)));
    job.signal.throwIfAborted();
    const now = new Date();
    const labelled = accuracy.totalSummary.good + accuracy.totalSummary.bad;
    await handleCommand(
      deps.events,
      modelTestingStream(projectId),
      modelTestingDecider,
      {
        type: 'RecordModelTest',
        data: {
          projectId,
          impulseId: spec.impulseId,
          jobId: job.jobId,
          results: blob.sha256,
          summary: {
            sampleCount: results.samples.length,
            skippedSampleCount: results.skipped.length,
            windowCount: labelled,
            accuracy: accuracy.accuracyScore ?? null,
            balancedAccuracy: accuracy.balancedAccuracyScore ?? null,
          },
          tested: now.toISOString(),
        },
      },
      systemContext(MODEL_TESTING, now),
    );
    job.log(`Model testing done: accuracy ${accuracy.accuracyScore === undefined ? 'n/a' : `${(100 * accuracy.accuracyScore).toFixed(2)}%`} on ${labelled} windows of ${results.samples.length} samples${results.skipped.length > 0 ? `, ${results.skipped.length} skipped` : ''}`);
  };
}
