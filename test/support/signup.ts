/** A sign-up body for POST /api-user-create: Ada with the test password, unless overridden. Apart from testService.ts so that tests that do not boot the service need not import it. */
export const signup = (overrides: Record<string, unknown> = {}) => ({
  name: 'Ada Lovelace',
  username: 'ada',
  email: 'ada@example.com',
  password: 'correct horse battery',
  privacyPolicy: true,
  turnstileResponse: 'test',
  ...overrides,
});
