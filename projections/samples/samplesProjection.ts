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
  const position = positionKey(event.position);
  await store
    .collection<ProjectDocument>(PROJECTS)
    .updateOne({ _id: projectId, _samplesPosition: { $not: { $gte: position } } }, { ...summary, $set: { ...summary.$set, _samplesPosition: position } });
  // Compared with the position of the event that set lastModified last, whichever projection's.
  await store
    .collection<ProjectDocument>(PROJECTS)
    .updateOne({ _id: projectId, _modifiedPosition: { $not: { $gte: position } } }, { $set: { ...modified, _modifiedPosition: position } });
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
    const key = summaryKey(d.category);
    await summarize(
      store,
      d.projectId,
      {
        $inc: { [`data.${key}.dataCount`]: 1, [`data.${key}.totalLengthMs`]: d.totalLengthMs, [`data.${key}.labels.${labelKey(d.label)}`]: 1, [`sampleKinds.${d.kind}`]: 1 },
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
    const key = summaryKey(sample.category);
    await summarize(
      store,
      sample.projectId,
      { $inc: { [`data.${key}.dataCount`]: -1, [`data.${key}.totalLengthMs`]: -sample.totalLengthMs, [`data.${key}.labels.${labelKey(sample.label)}`]: -1, [`sampleKinds.${sample.kind}`]: -1 } },
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
