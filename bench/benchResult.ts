/** What a benchmark hands back to bench/run.ts: a title and the lines to print under it. */
export interface BenchResult {
  name: string;
  lines: string[];
}
