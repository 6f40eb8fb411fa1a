import type { WhitelabelEvent } from '../../domain/whitelabel/whitelabelEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { WHITELABELS, type WhitelabelDocument } from './whitelabelDocument';

const whitelabels = (store: ReadStore) => store.collection<WhitelabelDocument>(WHITELABELS);

export const whitelabelsProjection = defineProjection<WhitelabelEvent>('whitelabels', [WHITELABELS], {
  async WhitelabelCreated(event, store) {
    const d = event.data;
    await insertOnce(whitelabels(store), { _id: d.whitelabelId, id: d.whitelabelId, ...d.settings, created: d.created, deletedDate: null, _position: '' }, event);
  },

  async WhitelabelUpdated(event, store) {
    await updateOnce(whitelabels(store), event.data.whitelabelId, { $set: { ...event.data.changes } }, event);
  },

  async WhitelabelDeleted(event, store) {
    await updateOnce(whitelabels(store), event.data.whitelabelId, { $set: { deletedDate: event.data.deletedDate } }, event);
  },
});
