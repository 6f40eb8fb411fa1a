import type { ApiDeps } from '../apiDeps';

/**
 * The impulse an operation means: the one asked for, else the project's chosen default
 * (`defaultImpulseId`, set with updateProject) while it exists, else undefined, which the impulse
 * queries and commands read as their own default (the lowest live id). Project information and
 * the impulse operations answer for the same impulse.
 */
export async function selectedImpulseId(deps: Pick<ApiDeps, 'projects' | 'impulses'>, projectId: number, requested: number | undefined): Promise<number | undefined> {
  if (requested !== undefined) return requested;
  const chosen = (await deps.projects.byId(projectId))?.settings?.defaultImpulseId;
  if (chosen === undefined || chosen === null) return undefined;
  return (await deps.impulses.byId(projectId, chosen)) ? chosen : undefined;
}
