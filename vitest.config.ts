import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Adapters open files and sockets; separate processes keep their state apart.
    pool: 'forks',
    // Password hashes at N=1024 instead of production's 16384 (honoured only under NODE_ENV=test; see
    // commands/passwords.ts): sign-ups and logins are a tenth of a second cheaper each.
    env: { EDGE_ML_TEST_SCRYPT_N: '1024' },
  },
});
