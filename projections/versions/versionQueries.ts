import type { ReadStore } from '../../stores/readstore/readStore';
import { VERSIONS, type VersionDocument } from './versionDocument';

export class VersionQueries {
  constructor(private readonly store: ReadStore) {}

  private get versions() {
    return this.store.collection<VersionDocument>(VERSIONS);
  }

  /** The project's live versions, newest first. */
  forProject(projectId: number): Promise<VersionDocument[]> {
    return this.versions.find({ projectId, deleted: false }, { sort: { number: -1 } });
  }

  /** A live version of the project, or null. */
  byId(projectId: number, versionId: number): Promise<VersionDocument | null> {
    return this.versions.findOne({ _id: versionId, projectId, deleted: false });
  }

  /** The number the project's next version gets: deleted versions' numbers stay taken. */
  async nextNumber(projectId: number): Promise<number> {
    const [last] = await this.versions.find({ projectId }, { sort: { number: -1 }, limit: 1 });
    return (last?.number ?? 0) + 1;
  }
}
