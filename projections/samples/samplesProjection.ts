import type { ProjectCreated, ProjectFullyDeleted } from '../../domain/project/projectEvents';
import type { SampleEvent } from '../../domain/sample/sampleEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore, Update } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, positionKey, storableKeys, updateOnce } from '../projection';
import { emptyData } from '../projects/projectDocument';
import { PROJECT_DATA, type ProjectDataDocument } from './projectDataDocument';
import { SAMPLES, labelKey, summaryKey, type SampleDocument } from './sampleDocument';

const samples = (store: ReadStore) => store.collection<SampleDocument>(SAMPLES);
const projectData = (store: ReadStore) => store.collection<ProjectDataDocument>(PROJECT_DATA);

/** A sample added or deleted: the project's summary counts it and names it as the last change. */
async function summarize(store: ReadStore, projectId: number, summary: Update, lastModified: string, details: string, event: StoredEvent): Promise<void> {
  // `summary.$set` is the caller's own new object: completed in place, not copied.
  const set = summary.$set ?? {};
  set.lastModified = lastModified;
  set.lastModificationDetails = details;
  await updateOnce(projectData(store), projectId, { $inc: summary.$inc, $set: set }, event);
}

/** The summary paths a sample counts in, by category, label and kind: made once, not for every sample. */
interface SummaryPaths {
  dataCount: string;
  totalLengthMs: string;
  label: string;
  kind: string;
}
const summaryPathsCache = new Map<string, SummaryPaths>();
const SUMMARY_PATHS_MAX = 10_000;

function summaryPaths(category: string, label: string | null, kind: string): SummaryPaths {
  const cacheKey = `${category}\u0000${label ?? '\u0001'}\u0000${kind}`;
  let paths = summaryPathsCache.get(cacheKey);
  if (!paths) {
    const key = summaryKey(category);
    paths = { dataCount: `data.${key}.dataCount`, totalLengthMs: `data.${key}.totalLengthMs`, label: `data.${key}.labels.${labelKey(label)}`, kind: `sampleKinds.${kind}` };
    if (summaryPathsCache.size >= SUMMARY_PATHS_MAX) summaryPathsCache.clear();
    summaryPathsCache.set(cacheKey, paths);
  }
  return paths;
}

/**
 * Samples and the summary of each project's data (`projectData`). Every document this writes is
 * guarded by the event's position, so a replayed event changes nothing.
 */
export const samplesProjection = defineProjection<SampleEvent | ProjectCreated | ProjectFullyDeleted>('samples', [SAMPLES, PROJECT_DATA], {
  // The summary exists from the project's start, so that every sample event is one guarded update.
  async ProjectCreated(event, store) {
    await insertOnce(
      projectData(store),
      { _id: event.data.projectId, data: emptyData(), sampleKinds: {}, hasNewTrainingData: false, lastModified: null, lastModificationDetails: null, _position: '' },
      event,
    );
  },
  async SampleIngested(event, store) {
    const d = event.data;
    const { sampleId, ingested } = d;
    // insertOnce's write, its fields (the event's own; client maps are in metadata) copied once by
    // hand: object rest and spread of the sample's thirty fields took more time than the rest of
    // this handler.
    const fields: Record<string, unknown> = {};
    for (const key in d) if (key !== 'sampleId' && key !== 'ingested') fields[key] = d[key as keyof typeof d];
    fields.metadata = storableKeys(d.metadata);
    fields.id = sampleId;
    fields.created = ingested;
    fields.deleted = false;
    fields._position = positionKey(event.position);
    await samples(store).updateOne({ _id: sampleId }, { $setOnInsert: fields }, { upsert: true });
    const paths = summaryPaths(d.category, d.label, d.kind);
    await summarize(
      store,
      d.projectId,
      {
        $inc: { [paths.dataCount]: 1, [paths.totalLengthMs]: d.totalLengthMs, [paths.label]: 1, [paths.kind]: 1 },
        ...(d.category === 'training' ? { $set: { hasNewTrainingData: true } } : {}),
      },
      ingested,
      `Sample ${d.fileName} added`,
      event,
    );
  },
  async SampleDeleted(event, store) {
    const sample = await samples(store).findOne({ _id: event.data.sampleId });
    // Applied already (replay), or never seen: nothing to take off the summaries.
    if (!sample || sample.deleted || sample._position >= positionKey(event.position)) return;
    const paths = summaryPaths(sample.category, sample.label, sample.kind);
    await summarize(
      store,
      sample.projectId,
      { $inc: { [paths.dataCount]: -1, [paths.totalLengthMs]: -sample.totalLengthMs, [paths.label]: -1, [paths.kind]: -1 } },
      event.data.deleted,
      `Sample ${sample.fileName} deleted`,
      event,
    );
    await updateOnce(samples(store), event.data.sampleId, { $set: { deleted: true } }, event);
  },
  // A fully deleted project's samples and summary leave the read models (the events stay in the log).
  async ProjectFullyDeleted(event, store) {
    await samples(store).deleteMany({ projectId: event.data.projectId });
    await projectData(store).deleteOne({ _id: event.data.projectId });
  },
});
