// Production code never reaches into test/: what the service's entry points bundle (service/build.ts)
// holds no test file. Test-only job runners come in through test/support/testServiceMain.ts instead.
import { build } from 'esbuild';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ENTRY_POINTS } from '../../service/build';

it("bundles no file under test/ into the service's entry points", async () => {
  const result = await build({
    absWorkingDir: path.resolve(__dirname, '../..'),
    entryPoints: ENTRY_POINTS,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    write: false,
    outdir: 'out',
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs).toContain('main.ts');
  expect(inputs.filter((file) => file.startsWith('test/'))).toEqual([]);
}, 60_000);
