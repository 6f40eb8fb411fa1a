// An organization's commands after creation: settings, members, API keys, deletion. Each is one
// decision on the `organization-{id}` stream; the caller settles on the returned position.
import { API_KEY_PREFIX, UNUSABLE_API_KEY, hashApiKey } from '../../domain/project/apiKeys';
import { organizationDecider, type OrganizationCommand, type OrganizationState } from '../../domain/organization/organizationDecider';
import { organizationStream, type OrganizationApiKeyRole, type OrganizationMemberRole } from '../../domain/organization/organizationEvents';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import { aggregateStream } from '../aggregateStream';
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

type UserLookup = { byUsernameOrEmail(value: string): Promise<{ id: number; email: string | null } | null> };

/** What an invitation offers, and who offers it. */
export interface MemberOffer {
  organizationId: number;
  role: OrganizationMemberRole;
  datasets: string[];
  invitedByUserId: number;
}

const inviteCommand = (offer: MemberOffer, invitedAs: string, invitationId: number, userId: number, acceptedOnActivation: boolean, now: Date): OrganizationCommand => ({
  type: 'InviteMember',
  data: { invitationId, userId, invitedAs, role: offer.role, datasets: offer.datasets, invitedByUserId: offer.invitedByUserId, acceptedOnActivation, now },
});

/** Refuses a bad offer, a member or a name already invited, before anything is drawn or created. */
async function checkInvitation(events: EventStore, offer: MemberOffer, invitedAs: string, userId: number | null, now: Date): Promise<void> {
  organizationDecider.decide(inviteCommand(offer, invitedAs, -1, userId ?? -1, false, now), await loadOrganization(events, offer.organizationId));
}

/**
 * Records the invitation. `userId` null: the name is no account's; the invitee is then an id drawn
 * from the users' own sequence, which no account will ever have, so that the answer (an invitation
 * id), the organization's pending list and the admin's own history read as for anyone else, and
 * nobody can ever accept it. (No invitation at all would show in the pending list by its absence.)
 */
async function recordInvitation(
  deps: { events: EventStore; ids: IdAllocator },
  offer: MemberOffer,
  invitedAs: string,
  userId: number | null,
  acceptedOnActivation: boolean,
  ctx: CommandContext,
): Promise<{ invitationId: number; position: Position | undefined }> {
  const invitee = userId ?? (await deps.ids.next('user'));
  const invitationId = await deps.ids.next('invitation');
  const position = await runOrganizationCommand(deps.events, offer.organizationId, inviteCommand(offer, invitedAs, invitationId, invitee, acceptedOnActivation, ctx.now), ctx);
  return { invitationId, position };
}

/**
 * `members/add`: invites whoever the username or e-mail names; they become a member only when they
 * accept. A name no account has gets the same answer and the same kind of invitation (see
 * recordInvitation), so the answer never says whether someone has an account.
 */
export async function inviteMemberByName(
  deps: { events: EventStore; ids: IdAllocator; users: UserLookup },
  input: MemberOffer & { usernameOrEmail: string },
  ctx: CommandContext,
): Promise<{ invitationId: number; position: Position | undefined }> {
  const user = await deps.users.byUsernameOrEmail(input.usernameOrEmail);
  await checkInvitation(deps.events, input, input.usernameOrEmail, user?.id ?? null, ctx.now);
  return recordInvitation(deps, input, input.usernameOrEmail, user?.id ?? null, false, ctx);
}

/**
 * `members/invite`: an invitation by e-mail. An account with that address is invited as by
 * `members/add`; otherwise a pending account is created, which e-mails its activation code through
 * the outbox, and invited with `acceptedOnActivation`: activating it with that code is the mailbox
 * holder's consent (see acceptInvitationsOnActivation). Both answer an invitation id.
 */
export async function inviteMember(
  deps: { events: EventStore; ids: IdAllocator; reservations: UniquenessReservations; sendEmail: SendEmail; users: UserLookup },
  input: MemberOffer & { organizationName: string; email: string; inviterName: string },
  ctx: CommandContext,
): Promise<{ invitationId: number; position: Position | undefined }> {
  const existing = await deps.users.byUsernameOrEmail(input.email);
  if (existing && existing.email?.toLowerCase() === input.email.toLowerCase()) {
    await checkInvitation(deps.events, input, input.email, existing.id, ctx.now);
    return recordInvitation(deps, input, input.email, existing.id, false, ctx);
  }
  // Refuse a bad role, datasets or a repeated address before a user is created for nothing.
  await checkInvitation(deps.events, input, input.email, null, ctx.now);
  let pending: { userId: number; position: Position };
  try {
    pending = await createPendingUser(deps, { email: input.email, name: input.email, invitedBy: `${input.inviterName} (organization ${input.organizationName})` }, ctx);
  } catch (error) {
    // The address is an account's that the read side does not show (yet, or any more): the same
    // answer as for any other address, and an invitation nobody can accept.
    if (error instanceof ConflictError && error.code === 'EMAIL_TAKEN') return recordInvitation(deps, input, input.email, null, false, ctx);
    throw error;
  }
  const invited = await recordInvitation(deps, input, input.email, pending.userId, true, ctx);
  return { invitationId: invited.invitationId, position: later(pending.position, invited.position) };
}

export const acceptMemberInvitation = (events: EventStore, organizationId: number, invitationId: number, userId: number, ctx: CommandContext) =>
  runOrganizationCommand(events, organizationId, { type: 'AcceptMemberInvitation', data: { invitationId, userId, now: ctx.now } }, ctx);

export const declineMemberInvitation = (events: EventStore, organizationId: number, invitationId: number, userId: number, ctx: CommandContext) =>
  runOrganizationCommand(events, organizationId, { type: 'DeclineMemberInvitation', data: { invitationId, userId, now: ctx.now } }, ctx);

export const withdrawMemberInvitation = (events: EventStore, organizationId: number, invitationId: number, withdrawnByUserId: number | null, ctx: CommandContext) =>
  runOrganizationCommand(events, organizationId, { type: 'WithdrawMemberInvitation', data: { invitationId, withdrawnByUserId, now: ctx.now } }, ctx);

/**
 * A pending account activated with the code e-mailed for an invitation: the person holding that
 * mailbox read who invited them and chose to join, so the invitation that created the account is
 * accepted. Other invitations (that never e-mailed a code) wait for their own answer. Should this
 * fail after the activation, the invitation stays pending and its invitee accepts it themselves.
 */
export async function acceptInvitationsOnActivation(
  deps: { events: EventStore; organizations: { invitingUser(userId: number): Promise<{ id: number; invitations?: { invitationId: number; userId: number; acceptedOnActivation: boolean }[] }[]> } },
  userId: number,
  ctx: CommandContext,
): Promise<Position | undefined> {
  let position: Position | undefined;
  for (const organization of await deps.organizations.invitingUser(userId)) {
    for (const invitation of organization.invitations ?? []) {
      if (invitation.userId !== userId || !invitation.acceptedOnActivation) continue;
      position = later(position, await acceptMemberInvitation(deps.events, organization.id, invitation.invitationId, userId, ctx));
    }
  }
  return position;
}

export async function loadOrganization(events: EventStore, organizationId: number): Promise<OrganizationState> {
  return (await aggregateStream(events, organizationStream(organizationId), organizationDecider)).state;
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
