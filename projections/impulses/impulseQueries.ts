import type { ReadStore } from '../../stores/readstore/readStore';
import { IMPULSES, type ImpulseDocument } from './impulseDocument';

/** What project information says about an impulse. */
export interface ImpulseStatus {
  /** The impulse exists and has at least one block. */
  created: boolean;
  /** Created, and every DSP block has a saved config. */
  configured: boolean;
  /**
   * Configured, and every learn block trained. Nothing records training yet, so this stays false
   * until the issue that adds training records it.
   */
  complete: boolean;
  defaultImpulseId: number | null;
}

export class ImpulseQueries {
  constructor(private readonly store: ReadStore) {}

  private get impulses() {
    return this.store.collection<ImpulseDocument>(IMPULSES);
  }

  /** The project's live impulses, lowest id (the default) first. */
  forProject(projectId: number): Promise<ImpulseDocument[]> {
    return this.impulses.find({ projectId, deleted: false }, { sort: { _id: 1 } });
  }

  /** One live impulse of the project; the default (lowest live id) when `impulseId` is undefined. */
  async byId(projectId: number, impulseId?: number): Promise<ImpulseDocument | null> {
    if (impulseId !== undefined) return this.impulses.findOne({ _id: impulseId, projectId, deleted: false });
    const [first] = await this.impulses.find({ projectId, deleted: false }, { sort: { _id: 1 }, limit: 1 });
    return first ?? null;
  }

  /** The live impulse holding DSP block `dspId` (block ids are unique within a project). */
  withDspBlock(projectId: number, dspId: number): Promise<ImpulseDocument | null> {
    return this.impulses.findOne({ projectId, deleted: false, 'dspBlocks.id': dspId });
  }

  async statusOf(projectId: number, impulseId?: number): Promise<ImpulseStatus> {
    const impulse = await this.byId(projectId, impulseId);
    const defaultImpulse = impulseId === undefined ? impulse : await this.byId(projectId);
    const defaultImpulseId = defaultImpulse?.id ?? null;
    if (!impulse) return { created: false, configured: false, complete: false, defaultImpulseId };
    const created = impulse.inputBlocks.length + impulse.dspBlocks.length + impulse.learnBlocks.length + impulse.postProcessingBlocks.length > 0;
    const configured = created && impulse.dspBlocks.every((b) => impulse.dspConfigs[String(b.id)] !== undefined);
    return { created, configured, complete: false, defaultImpulseId };
  }
}
