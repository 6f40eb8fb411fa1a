import type { ReadStore } from '../../stores/readstore/readStore';
import { readableKeys } from '../projection';
import { PROJECTS, type ProjectDocument } from './projectDocument';

/** The client-keyed settings as sent (the projection stores their keys escaped). */
function readable(project: ProjectDocument): ProjectDocument {
  const { metadata, csvImportConfig } = project.settings;
  return {
    ...project,
    settings: { ...project.settings, ...(metadata === undefined ? {} : { metadata: readableKeys(metadata) }), ...(csvImportConfig === undefined ? {} : { csvImportConfig: readableKeys(csvImportConfig) }) },
  };
}

export class ProjectQueries {
  constructor(private readonly store: ReadStore) {}

  private get projects() {
    return this.store.collection<ProjectDocument>(PROJECTS);
  }

  /** A live project, or null when it does not exist or was deleted. */
  async byId(id: number): Promise<ProjectDocument | null> {
    const project = await this.projects.findOne({ _id: id, deleted: false });
    return project && readable(project);
  }

  /** Whether the project was deleted (false for one that never existed). */
  async isDeleted(id: number): Promise<boolean> {
    return (await this.projects.findOne({ _id: id, deleted: true })) !== null;
  }

  /** Deleted projects whose full deletion is due by `now` and not done. */
  dueForFullDeletion(now: Date): Promise<ProjectDocument[]> {
    return this.projects.find({ deleted: true, fullDeletionDate: null, scheduledFullDeletionDate: { $lte: now.toISOString() } }, { sort: { _id: 1 } });
  }

  /** Fully deleted projects whose set-aside blobs have waited since before `before` and are not purged. */
  dueForBlobPurge(before: Date): Promise<ProjectDocument[]> {
    return this.projects.find({ blobsPurged: false, fullDeletionDate: { $lte: before.toISOString() } }, { sort: { _id: 1 } });
  }

  /** Projects not fully deleted (deleted ones waiting for it included): those whose content is still held. */
  async notFullyDeletedIds(): Promise<number[]> {
    return (await this.projects.find({ fullDeletionDate: null }, { sort: { _id: 1 } })).map((p) => p._id);
  }

  /** Live projects with an invitation to this user that they have not answered. */
  async invitingUser(userId: number): Promise<ProjectDocument[]> {
    return (await this.projects.find({ invitedUserIds: userId, deleted: false }, { sort: { _id: 1 } })).map(readable);
  }

  async forCollaborator(userId: number): Promise<ProjectDocument[]> {
    return (await this.projects.find({ collaboratorIds: userId, deleted: false }, { sort: { created: -1, _id: -1 } })).map(readable);
  }
}
