import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Adapters open files and sockets; separate processes keep their state apart.
    pool: 'forks',
  },
});
