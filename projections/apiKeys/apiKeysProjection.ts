import type { ProjectEvent } from '../../domain/project/projectEvents';
import { defineProjection, insertOnce } from '../projection';
import { API_KEYS, type ApiKeyDocument } from './apiKeyDocument';

export const apiKeysProjection = defineProjection<ProjectEvent>('apiKeys', {
  async ApiKeyAdded(event, store) {
    const d = event.data;
    await insertOnce(
      store.collection<ApiKeyDocument>(API_KEYS),
      {
        _id: d.keyHash,
        apiKeyId: d.apiKeyId,
        projectId: d.projectId,
        name: d.name,
        role: d.role,
        keyHint: d.keyHint,
        isDevelopmentKey: d.isDevelopmentKey,
        created: d.created,
        createdByUserId: d.createdByUserId,
        expires: d.expires,
        revoked: false,
        _position: '',
      },
      event,
    );
  },
});
