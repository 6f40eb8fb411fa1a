import { defineConfig } from 'vitest/config';

// Files that change module state other files would see: a vi.mock of a module the service imports,
// and the process-wide storage-full memory that /health reads (a read-model commit that fails on a
// full disk notes it too: /health in the next file of the worker said "storage-full" for 10 s). They
// get a fresh module graph each.
const needIsolation = [
  'test/api/organizationReadme.unit.spec.ts',
  'test/stores/storageFull.unit.spec.ts',
  'test/service/fullDisk.int.spec.ts',
  'test/stores/readStoreFullDisk.int.spec.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Adapters open files and sockets; separate processes keep their state apart.
    pool: 'forks',
    // Password hashes at N=1024 instead of production's 16384 (honoured only under NODE_ENV=test; see
    // commands/passwords.ts): sign-ups and logins are a tenth of a second cheaper each.
    env: { EDGE_ML_TEST_SCRYPT_N: '1024' },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.spec.ts'],
          exclude: needIsolation,
          // A worker keeps the modules it imported from one file to the next: the service and its
          // dependencies (TensorFlow.js among them) load once per worker instead of once per file.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: needIsolation } },
    ],
  },
});
