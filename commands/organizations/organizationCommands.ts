// An organization's commands after creation: settings, members, API keys, deletion. Each is one
// decision on the `organization-{id}` stream; the caller settles on the returned position.
import { API_KEY_PREFIX, UNUSABLE_API_KEY, hashApiKey } from '../../domain/project/apiKeys';
import { organizationDecider, type OrganizationCommand, type OrganizationState } from '../../domain/organization/organizationDecider';
import { organizationStream, type OrganizationApiKeyRole, type OrganizationEvent, type OrganizationMemberRole } from '../../domain/organization/organizationEvents';
import { fold } from '../../domain/shared/decider';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import { MIN_API_KEY_LENGTH } from '../projects/projectCommands';
import { newApiKey, reserveIssuedApiKey } from '../projects/createProject';
import type { UniquenessReservations } from '../uniqueness';
import type { SendEmail } from '../users/accountMail';
import { createPendingUser } from '../users/pendingUser';

export async function runOrganizationCommand(events: EventStore, organizationId: number, command: OrganizationCommand, ctx: CommandContext): Promise<Position | undefined> {
  const { appended } = await handleCommand(events, organizationStream(organizationId), organizationDecider, command, ctx);
  return appended?.position;
}

const later = (a: Position | undefined, b: Position | undefined): Position | undefined => (a === undefined ? b : b === undefined ? a : a > b ? a : b);

/**
 * An invitation by e-mail: a user with that address is added at once; otherwise a pending user is
 * created, which e-mails them an activation code through the outbox, and is added as a member.
 * Activating the pending user (the existing third-party activation) makes the membership usable.
 */
export async function inviteMember(
  deps: { events: EventStore; ids: IdAllocator; reservations: UniquenessReservations; sendEmail: SendEmail; users: { byUsernameOrEmail(value: string): Promise<{ id: number; email: string | null } | null> } },
  input: { organizationId: number; organizationName: string; email: string; role: OrganizationMemberRole; datasets: string[]; invitedBy: { id: number | null; name: string } },
  ctx: CommandContext,
): Promise<{ userId: number; position: Position | undefined }> {
  const existing = await deps.users.byUsernameOrEmail(input.email);
  const member = (userId: number): OrganizationCommand => ({
    type: 'AddMember',
    data: { userId, role: input.role, datasets: input.datasets, invited: true, addedByUserId: input.invitedBy.id, now: ctx.now },
  });
  if (existing && existing.email?.toLowerCase() === input.email.toLowerCase()) {
    return { userId: existing.id, position: await runOrganizationCommand(deps.events, input.organizationId, member(existing.id), ctx) };
  }
  // Refuse a bad role, datasets or membership before a user is created for nothing.
  const state = await loadOrganization(deps.events, input.organizationId);
  organizationDecider.decide(member(-1), state);
  const pending = await createPendingUser(deps, { email: input.email, name: input.email, invitedBy: `${input.invitedBy.name} (organization ${input.organizationName})` }, ctx);
  const position = await runOrganizationCommand(deps.events, input.organizationId, member(pending.userId), ctx);
  return { userId: pending.userId, position: later(pending.position, position) };
}

export async function loadOrganization(events: EventStore, organizationId: number): Promise<OrganizationState> {
  return fold(organizationDecider, (await events.readStream(organizationStream(organizationId))) as unknown as OrganizationEvent[]);
}

const API_KEY_CHARS = /^[\x21-\x7e]+$/;

/**
 * A key for the organization's routes. A chosen value follows the project keys' rule (prefix,
 * length, never issued before: reserved for good in the same `apikey` reservations, so a value is
 * never a project key and an organization key at once); only its hash and first characters are
 * appended.
 */
export async function addOrganizationApiKey(
  deps: {
    events: EventStore;
    ids: IdAllocator;
    reservations: UniquenessReservations;
    /** Whether a project key, or an organization key, ever had this hash (keys from before reservations have none). */
    apiKeys: { everIssued(hash: string): Promise<boolean> };
    organizations: { everIssuedKey(hash: string): Promise<boolean> };
  },
  organizationId: number,
  input: { name: string; role: OrganizationApiKeyRole; apiKey?: string; ttlSeconds?: number; createdByUserId: number | null },
  ctx: CommandContext,
): Promise<{ apiKeyId: number; apiKey: string; position: Position | undefined }> {
  const expires = input.ttlSeconds === undefined ? null : new Date(ctx.now.getTime() + input.ttlSeconds * 1000);
  const probe = (apiKeyId: number, key: string): OrganizationCommand => ({
    type: 'AddApiKey',
    data: { apiKeyId, name: input.name, role: input.role, keyHash: hashApiKey(key), keyHint: key.slice(0, 10), createdByUserId: input.createdByUserId, expires, now: ctx.now },
  });
  organizationDecider.decide(probe(-1, 'ei_probe'), await loadOrganization(deps.events, organizationId));
  let key: string;
  if (input.apiKey === undefined) key = newApiKey();
  else {
    key = input.apiKey;
    const unusable = () => new ValidationError(UNUSABLE_API_KEY, 'UNUSABLE_API_KEY');
    if (!key.startsWith(API_KEY_PREFIX) || key.length < MIN_API_KEY_LENGTH || key.length > 256 || !API_KEY_CHARS.test(key)) throw unusable();
    const hash = hashApiKey(key);
    // The reservation alone would let this organization choose its own earlier value again.
    if ((await deps.apiKeys.everIssued(hash)) || (await deps.organizations.everIssuedKey(hash))) throw unusable();
    try {
      await deps.reservations.reserve('apikey', hash, organizationStream(organizationId), ctx, 'taken');
    } catch (error) {
      if (error instanceof ConflictError) throw unusable();
      throw error;
    }
  }
  const apiKeyId = await deps.ids.next('apikey');
  const position = await runOrganizationCommand(deps.events, organizationId, probe(apiKeyId, key), ctx);
  if (input.apiKey === undefined) await reserveIssuedApiKey(deps.reservations, key, organizationStream(organizationId), ctx);
  return { apiKeyId, apiKey: key, position };
}
