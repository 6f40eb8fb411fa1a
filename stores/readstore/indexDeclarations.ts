// What a read model declares about the queries it makes: the indexes they need. Every adapter
// creates them at start (MongoDB with createIndexes, SQLite on key columns of the rows); the memory
// store keeps its automatic equality indexes (fieldIndexes.ts).

export interface IndexDeclaration {
  /** Dotted field paths in index order, with their direction, as MongoDB's createIndex takes them. */
  keys: Readonly<Record<string, 1 | -1>>;
  /**
   * The one field of this index holds an array, and queries ask for documents whose array holds a
   * value (MongoDB makes such an index multikey by itself; SQLite keeps the elements in a side table).
   */
  array?: true;
}

/** Per collection, the indexes its queries need. */
export type ReadModelIndexes = Readonly<Record<string, readonly IndexDeclaration[]>>;

const PATH_PART = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Refuses a declaration an adapter could not turn into an index (field names go into SQL and index names). */
export function assertIndexDeclarations(indexes: ReadModelIndexes): void {
  for (const [collection, declarations] of Object.entries(indexes)) {
    for (const declaration of declarations) {
      const paths = Object.keys(declaration.keys);
      if (paths.length === 0) throw new Error(`An index of "${collection}" names no field`);
      if (declaration.array && paths.length !== 1) throw new Error(`An array index of "${collection}" must name exactly one field`);
      for (const path of paths) {
        if (!path.split('.').every((part) => PATH_PART.test(part))) throw new Error(`Index field "${path}" of "${collection}" is not a plain dotted path`);
      }
    }
  }
}
