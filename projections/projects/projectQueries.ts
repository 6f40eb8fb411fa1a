import type { ReadStore } from '../../stores/readstore/readStore';
import { readableKeys } from '../projection';
import { PROJECT_DATA, type ProjectDataDocument } from '../samples/projectDataDocument';
import { emptyData, PROJECTS, type ProjectDocument } from './projectDocument';

/** A project as the API shows it: its document joined with the summary of its data. */
export type Project = ProjectDocument & Pick<ProjectDataDocument, 'data' | 'sampleKinds' | 'hasNewTrainingData'>;

/** The client-keyed settings as sent (the projection stores their keys escaped). */
function readable(project: ProjectDocument): ProjectDocument {
  const { metadata, csvImportConfig } = project.settings;
  return {
    ...project,
    settings: { ...project.settings, ...(metadata === undefined ? {} : { metadata: readableKeys(metadata) }), ...(csvImportConfig === undefined ? {} : { csvImportConfig: readableKeys(csvImportConfig) }) },
  };
}

/** The project with its data's summary; the last modification is the later of the project's own and its data's. */
function joined(project: ProjectDocument, summary: ProjectDataDocument | null | undefined): Project {
  const bySamples = summary?.lastModified != null && summary._position > (project._modifiedPosition ?? '');
  return {
    ...readable(project),
    data: summary?.data ?? emptyData(),
    sampleKinds: summary?.sampleKinds ?? {},
    hasNewTrainingData: summary?.hasNewTrainingData ?? false,
    ...(bySamples ? { lastModified: summary.lastModified!, lastModificationDetails: summary.lastModificationDetails ?? '' } : {}),
  };
}

export class ProjectQueries {
  constructor(private readonly store: ReadStore) {}

  private get projects() {
    return this.store.collection<ProjectDocument>(PROJECTS);
  }

  private async withData(projects: ProjectDocument[]): Promise<Project[]> {
    if (projects.length === 0) return [];
    const summaries = this.store.collection<ProjectDataDocument>(PROJECT_DATA);
    if (projects.length === 1) return [joined(projects[0]!, await summaries.findOne({ _id: projects[0]!._id }))];
    const byId = new Map((await summaries.find({ _id: { $in: projects.map((p) => p._id) } })).map((d) => [d._id, d]));
    return projects.map((p) => joined(p, byId.get(p._id)));
  }

  /** A live project, or null when it does not exist or was deleted. */
  async byId(id: number): Promise<Project | null> {
    const project = await this.projects.findOne({ _id: id, deleted: false });
    return project && (await this.withData([project]))[0]!;
  }

  /**
   * A live project's own document, without its data's summary or the settings made readable: for a
   * caller that needs only its keys (an upload's target), one read instead of two and no copy.
   */
  async liveDocument(id: number): Promise<ProjectDocument | null> {
    return this.projects.findOne({ _id: id, deleted: false });
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

  /** Live projects with an invitation to this user that they have not answered (their data is not the invitee's to read). */
  async invitingUser(userId: number): Promise<ProjectDocument[]> {
    return (await this.projects.find({ invitedUserIds: userId, deleted: false }, { sort: { _id: 1 } })).map(readable);
  }

  async forCollaborator(userId: number): Promise<Project[]> {
    return this.withData(await this.projects.find({ collaboratorIds: userId, deleted: false }, { sort: { created: -1, _id: -1 } }));
  }
}
