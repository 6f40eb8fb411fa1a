/**
 * The version of each projection's documents, where it is not the first. Bump a projection's version
 * when its documents change shape or meaning: its checkpoint gets a new name, and a checkpoint not
 * found makes the runner empty the projection's collections and apply the whole log to them again
 * (at the first start after the upgrade; the other projections go on from their checkpoints).
 */
const READ_MODEL_VERSIONS: Readonly<Record<string, number>> = {
  // The data summaries left the project documents for a collection of the samples projection's own.
  projects: 2,
  samples: 2,
  // Jobs name their parent job (parentJobId), so rootOnly lists leave a tuner run's trials out.
  jobs: 2,
};

/** The name of the checkpoint a projection keeps in the read store. */
export function checkpointName(projection: string): string {
  const version = READ_MODEL_VERSIONS[projection];
  return version === undefined || version === 1 ? projection : `${projection}@v${version}`;
}
