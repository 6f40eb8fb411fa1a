import { impulseBlockCatalog } from '../impulse/blockCatalog';

/** The impulse block catalog as a white label's projects see it: only the learn blocks it enables (all of them outside a white label). */
export function impulseBlocksFor(whitelabel: { learningBlocks: readonly string[] } | null): ReturnType<typeof impulseBlockCatalog> {
  const catalog = impulseBlockCatalog();
  return whitelabel === null ? catalog : { ...catalog, learnBlocks: catalog.learnBlocks.filter((b) => whitelabel.learningBlocks.includes(b.type)) };
}
