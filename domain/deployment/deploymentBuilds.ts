// The deployment targets this service can build (a subset of the catalog's formats), the engines
// each accepts, and the name its artifact is downloaded as. Both builds run the impulse with
// TensorFlow.js on its cpu backend whichever engine is asked for: the engine is the catalog's
// (`tflite`), recorded with the build as the client named it.
import { ValidationError } from '../shared/errors';
import { deploymentTargetCatalog } from './deploymentTargets';

interface BuildableTarget {
  /** What the artifact is called once downloaded, after the project's name. */
  suffix: string;
  contentType: string;
}

const BUILDABLE: Readonly<Record<string, BuildableTarget>> = {
  'runner-linux-x86_64': { suffix: 'linux-x86_64.eim', contentType: 'application/octet-stream' },
  wasm: { suffix: 'wasm.zip', contentType: 'application/zip' },
};

export const BUILDABLE_TYPES: readonly string[] = Object.keys(BUILDABLE);

/**
 * The build a request asks for, or a 400 naming what is wrong: a type that is no target, a target
 * this service does not build, or an engine the target does not take. `engine` undefined: any.
 */
export function resolveBuild(type: string, engine: string | undefined): { type: string; engine: string; contentType: string; suffix: string } {
  const target = deploymentTargetCatalog().find((t) => t.format === type);
  if (!target) throw new ValidationError(`Unknown deployment type "${type}": use one of the formats of GET /api/deployment/targets`, 'UNKNOWN_DEPLOYMENT_TYPE');
  const buildable = BUILDABLE[type];
  if (!buildable) throw new ValidationError(`Deployment type "${type}" is not built by this service: it builds ${BUILDABLE_TYPES.map((t) => `"${t}"`).join(' and ')}`, 'UNSUPPORTED_DEPLOYMENT_TYPE');
  const chosen = engine ?? target.preferredEngine;
  if (!(target.supportedEngines as readonly string[]).includes(chosen)) {
    throw new ValidationError(`Unknown engine "${chosen}" for deployment type "${type}": it takes ${target.supportedEngines.map((e) => `"${e}"`).join(', ')}`, 'UNSUPPORTED_ENGINE');
  }
  return { type, engine: chosen, ...buildable };
}

/** The project's name as a file name: lowercase letters, digits and dashes (`project` when nothing is left). */
export function fileSlug(name: string): string {
  const slug = name
    .normalize('NFKD')
    // Accents dropped, not split: "Déploy" is "deploy".
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return slug === '' ? 'project' : slug;
}

export const artifactFileName = (projectName: string, version: number, suffix: string): string => `${fileSlug(projectName)}-v${version}-${suffix}`;
