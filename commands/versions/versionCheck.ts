// What a restore does first: rebuild the source project as it stood at the version's position and
// check it covers exactly what the version recorded. A difference (a log rewritten, a projection
// changed since, a forgotten user's data) fails the restore naming the parts that differ, rather than
// restoring something else under the version's name.
import { canonicalJson } from './versionContents';
import type { VersionCreated, VersionContents } from '../../domain/version/versionEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { projectAt, type VersionJobDeps } from './versionJob';

/** The parts of `found` that differ from `recorded`, by name; empty when they are the same. */
export function contentsDiffer(recorded: VersionContents, found: VersionContents): string[] {
  const parts = Object.keys(recorded) as (keyof VersionContents)[];
  return parts.filter((part) => canonicalJson(recorded[part]) !== canonicalJson(found[part]));
}

/** The source's read models at the version's position, once they are checked to cover what it recorded. */
export async function rebuildVersion(deps: VersionJobDeps, version: VersionCreated['data'], signal: AbortSignal): Promise<ReadStore> {
  const { store, contents } = await projectAt(deps, version.projectId, BigInt(version.position), signal);
  const differ = contentsDiffer(version.contents, contents);
  if (differ.length > 0) throw new Error(`Version ${version.versionId} of project ${version.projectId} does not rebuild as recorded: its ${differ.join(', ')} differ`);
  return store;
}
