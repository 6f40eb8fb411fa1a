export interface ProjectCollaboratorEntry {
  userId: number;
  isOwner: boolean;
  added: string;
}

/** The `projects` read model: one document per project. */
export interface ProjectDocument {
  _id: number;
  id: number;
  name: string;
  description: string;
  created: string;
  ownerUserId: number;
  isPublic: boolean;
  collaborators: ProjectCollaboratorEntry[];
  /** For "which projects can this user see" queries. */
  collaboratorIds: number[];
  developmentApiKey: string | null;
  developmentHmacKey: string | null;
  lastModified: string;
  lastModificationDetails: string;
  deleted: boolean;
  _position: string;
  [key: string]: unknown;
}

export const PROJECTS = 'projects';
