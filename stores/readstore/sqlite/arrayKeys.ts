// The side table of a collection's declared array fields: one row per distinct element of each,
// so that "documents whose array holds v" is an index lookup.
import type { Document } from '../readStore';
import { keysAt } from './indexKeys';
import type { Layout } from './rowLayout';
import type { Statements } from './statements';
import { keyTable, quote } from './tableNames';

export function insertArrayKeys(statements: Statements, name: string, layout: Layout, seq: number, doc: Document): void {
  if (layout.arrayPaths.size === 0) return;
  const insert = statements.prepare(`INSERT INTO ${quote(keyTable(name))} (path, key, seq) VALUES (?, ?, ?)`);
  for (const path of layout.arrayPaths) {
    const seen = new Set<string>();
    for (const key of keysAt(doc, path.split('.'))) {
      const tag = Buffer.isBuffer(key) ? `b${key[0]}` : `${typeof key}:${key}`;
      if (seen.has(tag)) continue;
      seen.add(tag);
      insert.run(path, key, seq);
    }
  }
}

export function deleteArrayKeys(statements: Statements, name: string, layout: Layout, seq: number): void {
  if (layout.arrayPaths.size > 0) statements.prepare(`DELETE FROM ${quote(keyTable(name))} WHERE seq = ?`).run(seq);
}
