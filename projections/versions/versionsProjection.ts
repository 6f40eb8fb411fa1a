import type { VersionEvent } from '../../domain/version/versionEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { VERSIONS, type VersionDocument } from './versionDocument';

/** Each project's versions; guarded by position, so a replay changes nothing. */
export const versionsProjection = defineProjection<VersionEvent>('versions', [VERSIONS], {
  async VersionCreated(event, store) {
    const d = event.data;
    const contents = structuredClone(d.contents);
    await insertOnce(
      store.collection<VersionDocument>(VERSIONS),
      {
        _id: d.versionId, versionId: d.versionId, projectId: d.projectId, number: d.number, description: d.description, position: d.position, jobId: d.jobId, contents,
        createdByUserId: d.createdByUserId, created: d.created, trainingAccuracy: contents.trainingAccuracy, testAccuracy: contents.testAccuracy, totalSamplesCount: contents.samples.count, deleted: false, _position: '',
      },
      event,
    );
  },
  async VersionUpdated(event, store) {
    await updateOnce(store.collection<VersionDocument>(VERSIONS), event.data.versionId, { $set: { description: event.data.description } }, event);
  },
  async VersionDeleted(event, store) {
    await updateOnce(store.collection<VersionDocument>(VERSIONS), event.data.versionId, { $set: { deleted: true } }, event);
  },
});
