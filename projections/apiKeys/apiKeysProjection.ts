import type { ApiKeyUsed, ProjectEvent } from '../../domain/project/projectEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, positionKey } from '../projection';
import { API_KEYS, type ApiKeyDocument } from './apiKeyDocument';

const apiKeys = (store: ReadStore) => store.collection<ApiKeyDocument>(API_KEYS);

export const apiKeysProjection = defineProjection<ProjectEvent | ApiKeyUsed>('apiKeys', [API_KEYS], {
  async ApiKeyAdded(event, store) {
    const d = event.data;
    const position = positionKey(event.position);
    // One development key a project: the flag moves to the new one.
    if (d.isDevelopmentKey) {
      await apiKeys(store).updateMany({ projectId: d.projectId, isDevelopmentKey: true, _position: { $lt: position } }, { $set: { isDevelopmentKey: false, _position: position } });
    }
    await insertOnce(
      apiKeys(store),
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
        lastUsed: null,
        revoked: false,
        projectDeleted: false,
        _position: '',
      },
      event,
    );
  },

  async ApiKeyRevoked(event, store) {
    const position = positionKey(event.position);
    await apiKeys(store).updateMany(
      { apiKeyId: event.data.apiKeyId, _position: { $lt: position } },
      { $set: { revoked: true, isDevelopmentKey: false, _position: position } },
    );
  },

  async ApiKeyUsed(event, store) {
    const position = positionKey(event.position);
    await apiKeys(store).updateMany({ apiKeyId: event.data.apiKeyId, _position: { $lt: position } }, { $set: { lastUsed: event.data.date, _position: position } });
  },

  // Keys of a deleted project stop working at once, on every API.
  async ProjectDeleted(event, store) {
    const position = positionKey(event.position);
    await apiKeys(store).updateMany({ projectId: event.data.projectId, _position: { $lt: position } }, { $set: { projectDeleted: true, _position: position } });
  },
});
