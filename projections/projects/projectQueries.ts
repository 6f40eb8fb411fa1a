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

  /** Deleted projects whose full deletion is due by `now` and not done. */
  dueForFullDeletion(now: Date): Promise<ProjectDocument[]> {
    return this.projects.find({ deleted: true, fullDeletionDate: null, scheduledFullDeletionDate: { $lte: now.toISOString() } }, { sort: { _id: 1 } });
  }

  /** Fully deleted projects whose set-aside blobs have waited since before `before` and are not purged. */
  dueForBlobPurge(before: Date): Promise<ProjectDocument[]> {
    return this.projects.find({ blobsPurged: false, fullDeletionDate: { $lte: before.toISOString() } }, { sort: { _id: 1 } });
  }

  /** Live projects with an invitation to this user that they have not answered. */
  invitingUser(userId: number): Promise<ProjectDocument[]> {
    return this.projects.find({ invitedUserIds: userId, deleted: false }, { sort: { _id: 1 } });
  }

  forCollaborator(userId: number): Promise<ProjectDocument[]> {
    return this.projects.find({ collaboratorIds: userId, deleted: false }, { sort: { created: -1, _id: -1 } });
  }
}
