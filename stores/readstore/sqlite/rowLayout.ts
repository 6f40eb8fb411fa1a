// What a collection's index declarations ask of its rows: which fields get a key column SQL may
// compare (scalars), which are keyed aside element by element (arrays), and each row's values for
// them. A row records whether every declared scalar field of its document holds a scalar (`plain`);
// SQL searches only such rows by their keys.
import type { IndexDeclaration } from '../indexDeclarations';
import type { Document } from '../readStore';
import { IRREGULAR, keyAt } from './indexKeys';
import { keyColumn } from './tableNames';

/** What a collection's declarations ask of its rows: the scalar fields SQL may compare, and the array fields keyed aside. */
export class Layout {
  readonly scalarPaths: ReadonlySet<string>;
  readonly arrayPaths: ReadonlySet<string>;
  readonly scalarIndexes: readonly IndexDeclaration[];
  /** scalarPaths split at their dots, once rather than for every row written. */
  private readonly scalarParts: readonly (readonly string[])[];

  constructor(declarations: readonly IndexDeclaration[]) {
    this.scalarIndexes = declarations.filter((d) => !d.array);
    this.scalarPaths = new Set(['_id', ...this.scalarIndexes.flatMap((d) => Object.keys(d.keys))]);
    this.arrayPaths = new Set(declarations.filter((d) => d.array).flatMap((d) => Object.keys(d.keys)));
    this.scalarParts = [...this.scalarPaths].map((path) => path.split('.'));
  }

  /** Stored with the collection: when it changes, the rows' flags and keys are computed again. */
  get signature(): string {
    // `columns`: the keys are columns of the row (files made before kept them in expression indexes).
    return JSON.stringify({ scalar: [...this.scalarPaths].sort(), array: [...this.arrayPaths].sort(), columns: 1 });
  }

  /** The key columns (quoted), in the order rowValues gives their values. */
  get keyColumns(): string[] {
    return [...this.scalarPaths].map(keyColumn);
  }

  /**
   * The row's `plain` flag (every declared field one SQL compares exactly) and key columns, in one
   * walk of each path. A row that is not plain is never searched by its keys (see matching: such
   * rows are read whole and left to mingo), so its keys are left null.
   */
  rowValues(doc: Document): unknown[] {
    const values: unknown[] = [1];
    for (const path of this.scalarParts) {
      const key = keyAt(doc, path);
      if (key === IRREGULAR) return [0, ...this.scalarParts.map(() => null)];
      values.push(key);
    }
    return values;
  }
}
