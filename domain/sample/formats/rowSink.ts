// Where the format readers put the value rows of a stored sample. A reader hands each row to a sink
// as it decodes it, so what is kept is the sink's choice: every row as an array (the raw-data
// payloads), or only the axes and the rows a DSP window needs (domain/dsp/axesSelection.ts), which
// keeps a large sample's decoding from holding one array per row.

/** Thrown by a sink that has all the rows it wants: the reader stops there, and it is not an error. */
export class EnoughRows extends Error {}

export interface RowSink {
  /** The next row, one number per sensor; the array is the sink's to keep. May throw EnoughRows. */
  add(row: number[]): void;
}

/** Keeps the first `max` rows as they come. */
export class RowList implements RowSink {
  readonly rows: number[][] = [];
  constructor(private readonly max: number) {}

  add(row: number[]): void {
    this.rows.push(row);
    if (this.rows.length >= this.max) throw new EnoughRows();
  }
}
