// A node_modules holding only what `npm ci --omit=dev` installs (the image's final stage): the
// packages `dependencies` reach, with their optional and peer dependencies, as symlinks into the
// installed node_modules. Run with `--preserve-symlinks`, a module found there resolves its own
// imports there too, so a missing production dependency fails as it would in the image.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const manifestOf = (folder: string): Manifest => JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as Manifest;

/** Where Node finds `name` from the package in `from`: its own node_modules, then each one above it. */
function locate(name: string, from: string, root: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root || dir === path.dirname(dir)) return undefined;
  }
}

/** The top-level packages of `root`/node_modules that a production install of `root` holds. */
export function productionPackages(root: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string, from: string, required: boolean) => {
    const folder = locate(name, from, root);
    if (!folder) {
      if (required) throw new Error(`${name}, needed by ${from}, is not installed`);
      return;
    }
    if (seen.has(folder)) return;
    seen.add(folder);
    const manifest = manifestOf(folder);
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, folder, !(dep in (manifest.optionalDependencies ?? {})));
    for (const dep of Object.keys(manifest.optionalDependencies ?? {})) visit(dep, folder, false);
    // npm installs peers unless marked optional; an optional peer present is some other package's.
    for (const dep of Object.keys(manifest.peerDependencies ?? {})) if (!manifest.peerDependenciesMeta?.[dep]?.optional) visit(dep, folder, false);
  };
  const top = manifestOf(root);
  for (const dep of Object.keys(top.dependencies ?? {})) visit(dep, root, true);
  for (const dep of Object.keys(top.optionalDependencies ?? {})) visit(dep, root, false);
  const topLevel = path.join(root, 'node_modules');
  return [...seen].filter((folder) => path.dirname(folder) === topLevel || path.dirname(path.dirname(folder)) === topLevel && path.basename(path.dirname(folder)).startsWith('@'))
    .map((folder) => path.relative(topLevel, folder))
    .sort();
}

/** Makes `target`/node_modules with a symlink to each production package of `root`; answers their names. */
export async function linkProductionModules(root: string, target: string): Promise<string[]> {
  const names = productionPackages(root);
  for (const name of names) {
    const link = path.join(target, 'node_modules', name);
    await mkdir(path.dirname(link), { recursive: true });
    await symlink(path.join(root, 'node_modules', name), link, 'dir');
  }
  return names;
}
