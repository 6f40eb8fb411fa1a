import { EdgeImpulseApi } from 'edge-impulse-api';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService';

/** The whole service with SMTP_URL set: a real SMTP server receives the activation e-mail. */
describe('e-mail delivery through a configured SMTP server', () => {
  let smtp: SMTPServer;
  let service: TestService;
  const received: string[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push(Buffer.concat(chunks).toString('utf8'));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const port = (smtp.server.address() as AddressInfo).port;
    service = await startTestService({ mongo: false, env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'studio@example.com' } });
  });
  afterAll(async () => {
    await service?.destroy();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('sends the activation e-mail, records it as sent, and the code in it activates the account', async () => {
    const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.user.createUser({ name: 'Mail', username: 'mailer', email: 'mailer@example.com', password: 'a long password', privacyPolicy: true, turnstileResponse: 'ok' });
    const { token } = await api.login.login({ username: 'mailer', password: 'a long password' });
    await api.authenticate({ method: 'jwtToken', jwtToken: token! });

    let emails: Awaited<ReturnType<typeof api.user.listEmailsCurrentUser>>['emails'] = [];
    for (let i = 0; i < 100 && !emails[0]?.sent; i++) {
      await new Promise((r) => setTimeout(r, 50));
      ({ emails } = await api.user.listEmailsCurrentUser());
    }
    expect(emails[0]).toMatchObject({ from: 'studio@example.com', to: 'mailer@example.com', subject: 'Activate your account', sent: true, providerResponse: expect.stringMatching(/^250/) });
    expect(received).toHaveLength(1);
    const code = /code is: ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(received[0]!)![1]!;
    await api.user.activateCurrentUser({ code });
    expect((await api.user.getCurrentUser()).activated).toBe(true);
  });
});
