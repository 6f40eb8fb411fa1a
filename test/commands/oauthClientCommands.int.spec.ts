import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../commands/commandContext';
import { clientSecretMatches, deleteOAuthClient, registerOAuthClient } from '../../commands/oauth/oauthClientCommands';
import { oauthClientStream } from '../../domain/oauth/oauthClientEvents';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const ctx: CommandContext = { actor: 'user:7', correlationId: 'req-1', now: new Date('2026-11-28T10:00:00.000Z') };
const input = { ownerUserId: 7, name: 'Plant dashboard', redirectUris: ['https://dash.example.com/callback'], liveClients: 0 };

describe('OAuth client commands', () => {
  it('register a client whose secret is answered once and never stored, only its hash', async () => {
    const events = SqliteEventStore.open(':memory:');
    const { clientId, clientSecret } = await registerOAuthClient(events, input, ctx);
    expect(clientId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stream = await events.readStream(oauthClientStream(clientId));
    expect(stream.map((e) => e.type)).toEqual(['OAuthClientRegistered']);
    expect(stream[0]!.metadata).toMatchObject({ actor: 'user:7', correlationId: 'req-1' });
    const stored = JSON.stringify(stream[0]!.data);
    expect(stored).not.toContain(clientSecret);
    const { secretHash } = stream[0]!.data as { secretHash: string };
    expect(clientSecretMatches(clientSecret, secretHash)).toBe(true);
    expect(clientSecretMatches(`${clientSecret}x`, secretHash)).toBe(false);
    expect(clientSecretMatches('', secretHash)).toBe(false);
  });

  it('give every registration its own id and secret', async () => {
    const events = SqliteEventStore.open(':memory:');
    const a = await registerOAuthClient(events, input, ctx);
    const b = await registerOAuthClient(events, input, ctx);
    expect(a.clientId).not.toBe(b.clientId);
    expect(a.clientSecret).not.toBe(b.clientSecret);
  });

  it('refuse a bad redirect URI and store nothing', async () => {
    const events = SqliteEventStore.open(':memory:');
    await expect(registerOAuthClient(events, { ...input, redirectUris: ['http://dash.example.com/cb'] }, ctx)).rejects.toThrow(ValidationError);
    expect(await events.headPosition()).toBeUndefined();
  });

  it('delete a client for its owner only; another user gets not found and nothing changes', async () => {
    const events = SqliteEventStore.open(':memory:');
    const { clientId } = await registerOAuthClient(events, input, ctx);
    await expect(deleteOAuthClient(events, { clientId, requestedBy: 8 }, { ...ctx, actor: 'user:8' })).rejects.toThrow(NotFoundError);
    expect(await events.readStream(oauthClientStream(clientId))).toHaveLength(1);
    await deleteOAuthClient(events, { clientId, requestedBy: 7 }, ctx);
    expect((await events.readStream(oauthClientStream(clientId))).map((e) => e.type)).toEqual(['OAuthClientRegistered', 'OAuthClientDeleted']);
  });

  it('answer not found for an id that is not one, without touching the log', async () => {
    const events = SqliteEventStore.open(':memory:');
    await expect(deleteOAuthClient(events, { clientId: 'no such client id', requestedBy: 7 }, ctx)).rejects.toThrow(ValidationError);
    await expect(deleteOAuthClient(events, { clientId: 'Yq3x9V0pKcN2mW7tRb5sLa', requestedBy: 7 }, ctx)).rejects.toThrow(NotFoundError);
    expect(await events.headPosition()).toBeUndefined();
  });
});
