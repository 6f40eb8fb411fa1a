import type { ImpulseEvent } from '../../domain/impulse/impulseEvents';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { IMPULSES, type ImpulseDocument } from './impulseDocument';

export const impulsesProjection = defineProjection<ImpulseEvent>('impulses', [IMPULSES], {
  async ImpulseCreated(event, store) {
    const d = event.data;
    await insertOnce(
      store.collection<ImpulseDocument>(IMPULSES),
      {
        _id: d.impulseId,
        id: d.impulseId,
        projectId: d.projectId,
        name: d.name,
        type: d.type,
        tags: [],
        inputBlocks: d.inputBlocks,
        dspBlocks: d.dspBlocks,
        learnBlocks: d.learnBlocks,
        postProcessingBlocks: d.postProcessingBlocks,
        dspConfigs: {},
        created: d.created,
        lastModified: d.created,
        deleted: false,
        _position: '',
      },
      event,
    );
  },

  async ImpulseBlocksReplaced(event, store) {
    const d = event.data;
    const unset = Object.fromEntries(d.clearedDspIds.map((id) => [`dspConfigs.${id}`, '']));
    await updateOnce(
      store.collection<ImpulseDocument>(IMPULSES),
      d.impulseId,
      {
        $set: { name: d.name, type: d.type, inputBlocks: d.inputBlocks, dspBlocks: d.dspBlocks, learnBlocks: d.learnBlocks, postProcessingBlocks: d.postProcessingBlocks, lastModified: d.replaced },
        ...(d.clearedDspIds.length > 0 ? { $unset: unset } : {}),
      },
      event,
    );
  },

  async ImpulseUpdated(event, store) {
    const d = event.data;
    const changes = { ...(d.name === undefined ? {} : { name: d.name }), ...(d.tags === undefined ? {} : { tags: d.tags }), ...(d.type === undefined ? {} : { type: d.type }) };
    await updateOnce(store.collection<ImpulseDocument>(IMPULSES), d.impulseId, { $set: { ...changes, lastModified: d.updated } }, event);
  },

  async ImpulseDeleted(event, store) {
    const d = event.data;
    await updateOnce(store.collection<ImpulseDocument>(IMPULSES), d.impulseId, { $set: { deleted: true, lastModified: d.deleted } }, event);
  },

  async DspConfigSet(event, store) {
    const d = event.data;
    await updateOnce(store.collection<ImpulseDocument>(IMPULSES), d.impulseId, { $set: { [`dspConfigs.${d.dspId}`]: d.config, lastModified: d.set } }, event);
  },

  async DspBlockCleared(event, store) {
    const d = event.data;
    await updateOnce(store.collection<ImpulseDocument>(IMPULSES), d.impulseId, { $unset: { [`dspConfigs.${d.dspId}`]: '' }, $set: { lastModified: d.cleared } }, event);
  },
});
