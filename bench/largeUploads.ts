// 100 MB uploads through the whole service (embedded default, in this process), sent by a load
// generator in a child process (bench/largeUploadsClient.ts), as real clients are: the service's
// own RSS is sampled every 20 ms, so what is measured is the service alone. For each case (JSON
// and CBOR acquisition files through /data and through /files, CSV and WAV through /files):
// - the peak RSS over the service's idle RSS (the bound is 512 MB);
// - the seconds the upload took, next to the ceiling measured in the same run: the same bytes
//   copied to a new file in the same folder and fsynced;
// - the latency (p50/p99) of small signed uploads kept in flight meanwhile (two at a time), next
//   to their latency with nothing else running.

import { fork } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchResult } from './benchResult';
import { JSON_HEADERS, expectOk, ownerWithProject, quantiles, request, startBenchService } from './benchKit';
import type { CaseReport, ClientMessage, ClientSetup } from './largeUploadsClient';

const RSS_SAMPLE_MS = 20;
/** The issue's bound on the service's memory during one large upload, over idle. */
const RSS_BOUND_MB = 512;

export async function benchLargeUploads(): Promise<BenchResult> {
  const agent = new http.Agent({ keepAlive: true });
  const started = await startBenchService('large-uploads');
  const clientDir = mkdtempSync(join(tmpdir(), 'bench-large-client-'));
  let timer: NodeJS.Timeout | undefined;
  try {
    const { service } = started;
    const api = service.apiUrl;
    const ingestion = service.ingestionUrl;
    if (!api || !ingestion) throw new Error('the service started without its api and ingestion roles');
    const { token, projectId, apiKey } = await ownerWithProject(agent, api, 'benchlarge', 'Bench large uploads');
    const devkeys = expectOk(await request(agent, new URL(`/v1/api/${projectId}/devkeys`, api), 'GET', { ...JSON_HEADERS, 'x-jwt-token': token }), 'devkeys');
    const hmacKey = String((JSON.parse(devkeys) as { hmacKey: string }).hmacKey);

    global.gc?.();
    const idle = await idleRss();
    let peak = 0;
    timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), RSS_SAMPLE_MS);

    const client = fork(new URL('./largeUploadsClient.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
    const setup: ClientSetup = { ingestionUrl: ingestion, apiKey, hmacKey, dir: clientDir };
    const lines: string[] = [`service idle RSS ${mb(idle)} MB; RSS sampled every ${RSS_SAMPLE_MS} ms in the service's process; load generator in a child process`];
    let worstOver = 0;
    let atStart = 0;
    const exited = new Promise<void>((resolve, reject) => {
      client.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the load generator exited with ${code}`))));
      client.on('error', reject);
    });
    const done = new Promise<void>((resolve, reject) => {
      client.on('message', (message: ClientMessage) => {
        try {
          switch (message.kind) {
            case 'idle-latency':
              lines.push(`small uploads alone: ${latency(message.small)}`);
              break;
            case 'start':
              peak = process.memoryUsage.rss();
              atStart = peak;
              break;
            case 'end': {
              const over = peak - idle;
              worstOver = Math.max(worstOver, over);
              lines.push(describeCase(message, over, atStart - idle));
              break;
            }
            case 'note':
              lines.push(message.line);
              break;
            case 'done':
              resolve();
              break;
          }
        } catch (error) {
          reject(error);
        }
      });
    });
    client.send(setup);
    await Promise.race([done, exited.then(() => done)]);
    await exited;
    lines.push(`worst peak over idle ${mb(worstOver)} MB; bound ${RSS_BOUND_MB} MB: ${worstOver <= RSS_BOUND_MB * 1e6 ? 'within' : 'EXCEEDED'}`);
    return { name: 'large uploads (100 MB files, service and client in separate processes)', lines };
  } finally {
    if (timer) clearInterval(timer);
    agent.destroy();
    await started.stop();
    rmSync(clientDir, { recursive: true, force: true });
  }
}

function describeCase(report: CaseReport, overBytes: number, startOverBytes: number): string {
  const outcome = report.status === 200 ? 'stored' : `answered ${report.status}: ${report.answer}`;
  const ratio = report.diskSeconds / report.seconds;
  return [
    `${report.name}: ${mb(report.bytes)} MB ${outcome} in ${report.seconds.toFixed(2)} s`,
    `(fsync'd disk copy of the same bytes ${report.diskSeconds.toFixed(2)} s, ratio ${ratio.toFixed(2)});`,
    `peak RSS over idle ${mb(overBytes)} MB (${mb(startOverBytes)} MB at its start)`,
    report.small.length > 0 ? `; small uploads meanwhile: ${latency(report.small)}${report.smallFailures ? `, ${report.smallFailures} FAILED` : ''}` : '',
  ].join(' ');
}

function latency(seconds: number[]): string {
  const [p50, p99, max] = quantiles(seconds, [0.5, 0.99, 1]).map((s) => (s * 1000).toFixed(1));
  return `${seconds.length} answered, p50 ${p50} ms, p99 ${p99} ms, max ${max} ms`;
}

/** The lowest of a few samples a little apart: idle, after start-up's garbage is collectable. */
async function idleRss(): Promise<number> {
  let lowest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 10; i++) {
    lowest = Math.min(lowest, process.memoryUsage.rss());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return lowest;
}

function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(0);
}
