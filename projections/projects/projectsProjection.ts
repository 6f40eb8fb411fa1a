import type { ProjectEvent } from '../../domain/project/projectEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { PROJECTS, emptyData, type ProjectDocument } from './projectDocument';

export const projectsProjection = defineProjection<ProjectEvent>('projects', {
  async ProjectCreated(event, store) {
    const d = event.data;
    await insertOnce(
      store.collection<ProjectDocument>(PROJECTS),
      {
        _id: d.projectId,
        id: d.projectId,
        name: d.name,
        description: d.description,
        created: d.created,
        ownerUserId: d.ownerUserId,
        isPublic: d.isPublic,
        collaborators: [],
        collaboratorIds: [],
        developmentApiKey: null,
        developmentHmacKey: null,
        data: emptyData(),
        hasNewTrainingData: false,
        lastModified: d.created,
        lastModificationDetails: 'Project created',
        deleted: false,
        _position: '',
      },
      event,
    );
  },

  async CollaboratorAdded(event, store) {
    const d = event.data;
    await updateOnce(
      store.collection<ProjectDocument>(PROJECTS),
      d.projectId,
      { $push: { collaborators: { userId: d.userId, isOwner: d.isOwner, added: d.added }, collaboratorIds: d.userId } },
      event,
    );
  },

  async ApiKeyAdded(event, store) {
    const d = event.data;
    if (!d.isDevelopmentKey) return;
    await updateOnce(store.collection<ProjectDocument>(PROJECTS), d.projectId, { $set: { developmentApiKey: d.apiKey } }, event);
  },

  async HmacKeyAdded(event, store) {
    const d = event.data;
    if (!d.isDevelopmentKey) return;
    await updateOnce(store.collection<ProjectDocument>(PROJECTS), d.projectId, { $set: { developmentHmacKey: d.hmacKey } }, event);
  },
});
