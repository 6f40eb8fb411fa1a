// A read-models file as the SQLite store laid it out before key columns (index keys were expressions
// over the JSON), to check that an open lays it out anew.
import Database from 'better-sqlite3';
import { expect } from 'vitest';

/**
 * Makes a collection of a file look as the store laid it out before key columns: no `k:` columns,
 * the named declared indexes on expressions of the JSON (the rest gone), and the layout recorded
 * without `columns`, so the next open lays it out anew.
 */
export function toExpressionLayout(file: string, collection: string, indexes: Record<string, string[]>): void {
  const db = new Database(file);
  try {
    const table = `"c:${collection}"`;
    const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(`c:${collection}`) as string[]).filter((c) => c.startsWith('k:'));
    expect(columns.length).toBeGreaterThan(0);
    for (const index of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL AND name NOT LIKE '%:irregular'`).pluck().all(`c:${collection}`) as string[]) db.exec(`DROP INDEX "${index}"`);
    for (const column of columns) db.exec(`ALTER TABLE ${table} DROP COLUMN "${column}"`);
    const key = (p: string) => `(CASE json_type(doc, '$.${p}') WHEN 'true' THEN x'01' WHEN 'false' THEN x'00' ELSE json_extract(doc, '$.${p}') END)`;
    for (const [name, fields] of Object.entries(indexes)) db.exec(`CREATE INDEX "c:${collection}:${name}" ON ${table} (${fields.map((f) => key(f) + (name.includes(`${f}-`) ? ' DESC' : '')).join(', ')})`);
    const layout = JSON.parse(db.prepare(`SELECT layout FROM collections WHERE name = ?`).pluck().get(collection) as string) as Record<string, unknown>;
    delete layout.columns;
    db.prepare(`UPDATE collections SET layout = ? WHERE name = ?`).run(JSON.stringify(layout), collection);
  } finally {
    db.close();
  }
}
