import type { ReadStore } from '../../stores/readstore/readStore';
import { PROJECTS, type ProjectDocument } from './projectDocument';

export class ProjectQueries {
  constructor(private readonly store: ReadStore) {}

  private get projects() {
    return this.store.collection<ProjectDocument>(PROJECTS);
  }

  /** A live project, or null when it does not exist or was deleted. */
  byId(id: number): Promise<ProjectDocument | null> {
    return this.projects.findOne({ _id: id, deleted: false });
  }

  forCollaborator(userId: number): Promise<ProjectDocument[]> {
    return this.projects.find({ collaboratorIds: userId, deleted: false }, { sort: { created: -1, _id: -1 } });
  }
}
