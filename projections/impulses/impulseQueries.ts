import { featuresFingerprint } from '../../domain/dsp/featuresFingerprint';
import type { ReadStore } from '../../stores/readstore/readStore';
import { DSP_FEATURES, dspFeaturesId, type DspFeaturesDocument } from '../dspFeatures/dspFeaturesDocument';
import { IMPULSES, type ImpulseDocument } from './impulseDocument';

/** What project information says about an impulse. */
export interface ImpulseStatus {
  /** The impulse exists and has at least one block. */
  created: boolean;
  /** Created, and every DSP block has a saved config. */
  configured: boolean;
  /**
   * Configured, with at least one DSP block, and every DSP block's current generated features made
   * for the blocks and parameters it has now (featuresFingerprint): a later change to the block's
   * parameters, axes, version or its input block's windowing makes it false until the features are
   * generated again. Learn blocks do not count yet: nothing trains them in this service, so an
   * impulse is complete once everything it can produce is produced; when training lands, each learn
   * block will also need a model trained on its DSP blocks' current features.
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
    const complete = configured && impulse.dspBlocks.length > 0 && (await this.featuresCurrent(impulse));
    return { created, configured, complete, defaultImpulseId };
  }

  /** Whether every DSP block's latest features (not cleared) were made for the impulse as it is now. */
  private async featuresCurrent(impulse: ImpulseDocument): Promise<boolean> {
    const features = this.store.collection<DspFeaturesDocument>(DSP_FEATURES);
    for (const block of impulse.dspBlocks) {
      const doc = await features.findOne({ _id: dspFeaturesId(impulse.projectId, block.id) });
      if (!doc || !doc.current || doc.impulseId !== impulse.id) return false;
      if (doc.impulseFingerprint === undefined || doc.impulseFingerprint !== featuresFingerprint(impulse, block.id)) return false;
    }
    return true;
  }
}
