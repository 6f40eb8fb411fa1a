import type { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import type { ProjectDocument } from '../../projections/projects/projectDocument';

/**
 * The impulse an operation means: the one asked for, else the project's chosen default
 * (`defaultImpulseId`, set with updateProject) while it exists, else undefined, which the impulse
 * queries and commands read as their own default (the lowest live id). Project information and
 * the impulse operations answer for the same impulse.
 */
export async function selectedImpulseId(impulses: ImpulseQueries, project: ProjectDocument, requested: number | undefined): Promise<number | undefined> {
  if (requested !== undefined) return requested;
  const chosen = project.settings?.defaultImpulseId;
  if (chosen === undefined || chosen === null) return undefined;
  return (await impulses.byId(project.id, chosen)) ? chosen : undefined;
}
