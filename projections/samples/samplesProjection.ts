import type { ProjectFullyDeleted } from '../../domain/project/projectEvents';
import type { SampleEvent } from '../../domain/sample/sampleEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore, Update } from '../../stores/readstore/readStore';
import { DEVICES, deviceDocumentId, type DeviceDocument } from '../devices/deviceDocument';
import { defineProjection, insertOnce, positionKey, storableKeys, updateOnce } from '../projection';
import { PROJECTS, type ProjectDocument } from '../projects/projectDocument';
import { SAMPLES, labelKey, summaryKey, type SampleDocument } from './sampleDocument';

const samples = (store: ReadStore) => store.collection<SampleDocument>(SAMPLES);

/**
 * Samples, the data summaries of their project and the devices seen in the data. Every document
 * this touches is guarded by the event's position, so a replayed event changes nothing.
 */
/**
 * The data summaries are this projection's part of the project document (owned by the projects
 * projection), guarded by a position of their own, `_samplesPosition`: this projection may lag
 * behind the projects projection (one failing does not hold back the other) and still counts each
 * sample once. The last modification is shared: set only when no later event has set it
 * (`_modifiedPosition`), so it ends as if both had applied the log in step, in whatever order. The runner keeps this projection from passing the projects
 * projection, so the project document exists when a sample comes.
 */
async function summarize(store: ReadStore, projectId: number, summary: Update, modified: Record<string, unknown>, event: StoredEvent): Promise<void> {
  // `summary.$set` and `modified` are the caller's own new objects: completed in place, not copied.
  const position = positionKey(event.position);
  const projects = store.collection<ProjectDocument>(PROJECTS);
  const set = summary.$set ?? {};
  set._samplesPosition = position;
  await projects.updateOne({ _id: projectId, _samplesPosition: { $not: { $gte: position } } }, { $inc: summary.$inc, $set: set });
  // Compared with the position of the event that set lastModified last, whichever projection's.
  modified._modifiedPosition = position;
  await projects.updateOne({ _id: projectId, _modifiedPosition: { $not: { $gte: position } } }, { $set: modified });
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

export const samplesProjection = defineProjection<SampleEvent | ProjectFullyDeleted>('samples', [SAMPLES, DEVICES], {
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
      { lastModified: ingested, lastModificationDetails: `Sample ${d.fileName} added` },
      event,
    );
    if (d.deviceName) {
      const devices = store.collection<DeviceDocument>(DEVICES);
      const _id = deviceDocumentId(d.projectId, d.deviceName);
      await insertOnce(
        devices,
        { _id, id: sampleId, projectId: d.projectId, deviceId: d.deviceName, name: d.deviceName, deviceType: d.deviceType ?? 'unknown', created: ingested, lastSeen: ingested, _position: '' },
        event,
      );
      await updateOnce(devices, _id, { $set: { lastSeen: ingested, ...(d.deviceType ? { deviceType: d.deviceType } : {}) } }, event);
    }
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
      { lastModified: event.data.deleted, lastModificationDetails: `Sample ${sample.fileName} deleted` },
      event,
    );
    await updateOnce(samples(store), event.data.sampleId, { $set: { deleted: true } }, event);
  },
  // A fully deleted project's samples and devices leave the read models (the events stay in the log).
  async ProjectFullyDeleted(event, store) {
    await samples(store).deleteMany({ projectId: event.data.projectId });
    await store.collection<DeviceDocument>(DEVICES).deleteMany({ projectId: event.data.projectId });
  },
}, { follows: ['projects'] });
