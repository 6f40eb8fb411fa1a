// Documents written to their rows: the JSON, the `plain` flag and key columns (rowLayout.ts), and
// the array keys aside. Each write forgets what this connection remembered of the table.
import type { Document, DocumentId } from '../readStore';
import { deleteArrayKeys, insertArrayKeys } from './arrayKeys';
import { encode } from './documentJson';
import { idKey } from './indexKeys';
import type { ReadCaches } from './readCaches';
import type { Statements } from './statements';
import type { Tables } from './tableLayout';
import { docTable } from './tableNames';

export class RowWrites {
  constructor(
    private readonly tables: Tables,
    private readonly statements: Statements,
    private readonly caches: ReadCaches,
  ) {}

  seqOf(name: string, id: DocumentId): number | undefined {
    const row = this.statements.prepare(this.tables.sqlOf(name).seqById).get(idKey(id)) as { seq: number } | undefined;
    return row?.seq;
  }

  insert(name: string, doc: Document): void {
    this.caches.written(docTable(name));
    const layout = this.tables.layout(name);
    const result = this.statements.prepare(this.tables.sqlOf(name).insert).run(idKey(doc._id), encode(doc), ...layout.rowValues(doc));
    insertArrayKeys(this.statements, name, layout, Number(result.lastInsertRowid), doc);
  }

  /**
   * Writes the whole document by `_id`, inserting it if absent, a replaced one keeping its row (its
   * natural order). Without array keys to maintain, one statement finds and writes the row.
   */
  put(name: string, doc: Document): void {
    const layout = this.tables.layout(name);
    if (layout.arrayPaths.size > 0) {
      const seq = this.seqOf(name, doc._id);
      if (seq === undefined) this.insert(name, doc);
      else this.replace(name, seq, doc);
      return;
    }
    this.caches.written(docTable(name));
    this.statements.prepare(this.tables.sqlOf(name).upsert).run(idKey(doc._id), encode(doc), ...layout.rowValues(doc));
  }

  replace(name: string, seq: number, doc: Document): void {
    this.caches.written(docTable(name));
    const layout = this.tables.layout(name);
    this.statements.prepare(this.tables.sqlOf(name).update).run(encode(doc), ...layout.rowValues(doc), seq);
    deleteArrayKeys(this.statements, name, layout, seq);
    insertArrayKeys(this.statements, name, layout, seq, doc);
  }

  remove(name: string, seq: number): void {
    this.caches.written(docTable(name));
    this.statements.prepare(this.tables.sqlOf(name).remove).run(seq);
    deleteArrayKeys(this.statements, name, this.tables.layout(name), seq);
  }
}
