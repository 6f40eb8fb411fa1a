// Collaborators join by invitation: given the project's events, when an invitation command comes,
// then these events (or this refusal). The invitee has no access until CollaboratorAdded.
import { describe, expect, it } from 'vitest';
import { projectDecider, type ProjectCommand, type ProjectState } from '../../domain/project/projectDecider';
import type { ProjectEvent } from '../../domain/project/projectEvents';
import { fold } from '../../domain/shared/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(projectDecider);
const now = new Date('2026-11-25T10:00:00.000Z');
const at = now.toISOString();
const OWNER = 7;
const BOB = 8;

const create: ProjectCommand = {
  type: 'CreateProject',
  data: {
    projectId: 3,
    name: 'Gestures',
    ownerUserId: OWNER,
    isPublic: false,
    developmentApiKey: { id: 11, key: 'ei_0123456789abcdef', hash: 'hash-of-key' },
    developmentHmacKey: { id: 12, key: 'hmac-secret' },
    now,
  },
};
const invite = (userId: number | null = BOB, invitationId = 40, invitedAs = 'bob@example.com', invitedByUserId = OWNER): ProjectCommand => ({
  type: 'InviteCollaborator',
  data: { invitationId, userId, invitedAs, invitedByUserId, now },
});
const accept = (invitationId = 40, userId = BOB): ProjectCommand => ({ type: 'AcceptCollaboratorInvitation', data: { invitationId, userId, now } });
const decline = (invitationId = 40, userId = BOB): ProjectCommand => ({ type: 'DeclineCollaboratorInvitation', data: { invitationId, userId, now } });
const withdraw = (invitationId = 40, withdrawnByUserId: number | null = OWNER): ProjectCommand => ({
  type: 'WithdrawCollaboratorInvitation',
  data: { invitationId, withdrawnByUserId, now },
});
const remove = (userId = BOB, byUserId: number | null = OWNER): ProjectCommand => ({ type: 'RemoveCollaborator', data: { userId, byUserId, now } });

function history(...commands: ProjectCommand[]): ProjectEvent[] {
  const events: ProjectEvent[] = [];
  for (const c of commands) events.push(...projectDecider.decide(c, fold(projectDecider, events)));
  return events;
}

const created = history(create);
const invited = history(create, invite());
const joined = history(create, invite(), accept());
const stateOf = (events: ProjectEvent[]) => fold(projectDecider, events) as Extract<ProjectState, { status: 'active' }>;

describe('a project nobody was invited to', () => {
  it('records an invitation with what the inviter typed, and nothing else about the invitee', () => {
    spec
      .given(created)
      .when(invite(BOB, 40, '  bob@example.com '))
      .then([{ type: 'CollaboratorInvited', data: { projectId: 3, invitationId: 40, userId: BOB, invitedAs: 'bob@example.com', invitedByUserId: OWNER, invited: at } }]);
  });

  it('does not make the invitee a collaborator', () => {
    expect(stateOf(invited).collaboratorIds).toEqual([OWNER]);
    expect(stateOf(invited).invitations).toEqual({ 40: { userId: BOB, invitedAs: 'bob@example.com' } });
  });

  it('refuses an invitation from someone who is not a collaborator', () => {
    spec.given(created).when(invite(BOB, 40, 'bob', 99)).thenThrows(ValidationError, /Only a collaborator/);
  });

  it('refuses to invite someone who already collaborates, the owner included', () => {
    spec.given(created).when(invite(OWNER)).thenThrows(ConflictError, /already a collaborator/);
    spec.given(joined).when(invite(BOB, 41)).thenThrows(ConflictError, /already a collaborator/);
  });

  it('refuses a typed name that is empty, too long or holds control characters', () => {
    spec.given(created).when(invite(BOB, 40, '   ')).thenThrows(ValidationError, /usernameOrEmail/);
    spec.given(created).when(invite(BOB, 40, 'b'.repeat(257))).thenThrows(ValidationError, /at most 256/);
    spec.given(created).when(invite(BOB, 40, 'bob\u202e')).thenThrows(ValidationError, /invisible formatting/);
  });

  it('refuses invitation commands on a project that does not exist', () => {
    for (const command of [invite(), accept(), decline(), withdraw()]) spec.given([]).when(command).thenThrows(NotFoundError, /Project not found/);
  });
});

describe('a project with a pending invitation', () => {
  it('refuses a second invitation under the same name, whoever is behind it', () => {
    spec.given(invited).when(invite(BOB, 41, ' BOB@example.com')).thenThrows(ConflictError, /"BOB@example.com" already waits for an answer/);
    const toNobody = history(create, invite(null, 40, 'nobody@example.com'));
    spec.given(toNobody).when(invite(null, 41, 'nobody@example.com')).thenThrows(ConflictError, /"nobody@example.com" already waits for an answer/);
  });

  it('records a second invitation of the same person under another name, as it would for a name with no account', () => {
    spec.given(invited).when(invite(BOB, 41, 'bob')).then([
      { type: 'CollaboratorInvited', data: { projectId: 3, invitationId: 41, userId: BOB, invitedAs: 'bob', invitedByUserId: OWNER, invited: at } },
    ]);
    spec.given(invited).when(invite(null, 41, 'carol')).then([
      { type: 'CollaboratorInvited', data: { projectId: 3, invitationId: 41, userId: null, invitedAs: 'carol', invitedByUserId: OWNER, invited: at } },
    ]);
  });

  it('answers every invitation of a person when they accept one', () => {
    const twice = history(create, invite(), invite(BOB, 41, 'bob'));
    spec.given(twice).when(accept(41)).then([
      { type: 'CollaboratorInvitationAccepted', data: { projectId: 3, invitationId: 41, userId: BOB, accepted: at } },
      { type: 'CollaboratorInvitationAccepted', data: { projectId: 3, invitationId: 40, userId: BOB, accepted: at } },
      { type: 'CollaboratorAdded', data: { projectId: 3, userId: BOB, isOwner: false, added: at } },
    ]);
    expect(stateOf(history(create, invite(), invite(BOB, 41, 'bob'), accept(41))).invitations).toEqual({});
  });

  it('lets nobody accept an invitation to a name with no account; it can only be withdrawn', () => {
    const toNobody = history(create, invite(null, 40, 'nobody@example.com'));
    spec.given(toNobody).when(accept(40, 99)).thenThrows(NotFoundError, /No pending invitation 40/);
    spec.given(toNobody).when(withdraw(40)).then([
      { type: 'CollaboratorInvitationWithdrawn', data: { projectId: 3, invitationId: 40, userId: null, withdrawnByUserId: OWNER, withdrawn: at } },
    ]);
  });

  it('lets the invitee accept, which adds them as a collaborator in the same decision', () => {
    spec.given(invited).when(accept()).then([
      { type: 'CollaboratorInvitationAccepted', data: { projectId: 3, invitationId: 40, userId: BOB, accepted: at } },
      { type: 'CollaboratorAdded', data: { projectId: 3, userId: BOB, isOwner: false, added: at } },
    ]);
    expect(stateOf(joined).collaboratorIds).toEqual([OWNER, BOB]);
    expect(stateOf(joined).invitations).toEqual({});
  });

  it('lets the invitee decline, which leaves them out', () => {
    spec.given(invited).when(decline()).then([{ type: 'CollaboratorInvitationDeclined', data: { projectId: 3, invitationId: 40, userId: BOB, declined: at } }]);
    const declined = history(create, invite(), decline());
    expect(stateOf(declined).collaboratorIds).toEqual([OWNER]);
    expect(stateOf(declined).invitations).toEqual({});
  });

  it('refuses an answer from anyone but the invitee, as not found', () => {
    spec.given(invited).when(accept(40, 99)).thenThrows(NotFoundError, /No pending invitation 40/);
    spec.given(invited).when(decline(40, OWNER)).thenThrows(NotFoundError, /No pending invitation 40/);
    spec.given(invited).when(accept(41)).thenThrows(NotFoundError, /No pending invitation 41/);
  });

  it('lets a collaborator or an API key withdraw it', () => {
    spec.given(invited).when(withdraw(40, OWNER)).then([
      { type: 'CollaboratorInvitationWithdrawn', data: { projectId: 3, invitationId: 40, userId: BOB, withdrawnByUserId: OWNER, withdrawn: at } },
    ]);
    spec.given(invited).when(withdraw(40, null)).thenMatches((events) => expect(events[0]!.data).toMatchObject({ withdrawnByUserId: null }));
  });

  it('withdraws it when the invitee is removed before they answered', () => {
    spec.given(invited).when(remove(BOB, OWNER)).then([
      { type: 'CollaboratorInvitationWithdrawn', data: { projectId: 3, invitationId: 40, userId: BOB, withdrawnByUserId: OWNER, withdrawn: at } },
    ]);
  });

  it('invites again someone who declined or whose invitation was withdrawn', () => {
    spec.given(history(create, invite(), decline())).when(invite(BOB, 41)).thenMatches((events) => expect(events.map((e) => e.type)).toEqual(['CollaboratorInvited']));
    spec.given(history(create, invite(), withdraw())).when(invite(BOB, 41)).thenMatches((events) => expect(events.map((e) => e.type)).toEqual(['CollaboratorInvited']));
  });
});

describe('a project whose invitation was answered', () => {
  it('refuses a second answer and a withdrawal, as not found', () => {
    for (const answered of [joined, history(create, invite(), decline()), history(create, invite(), withdraw())]) {
      spec.given(answered).when(accept()).thenThrows(NotFoundError, /No pending invitation 40/);
      spec.given(answered).when(decline()).thenThrows(NotFoundError, /No pending invitation 40/);
      spec.given(answered).when(withdraw()).thenThrows(NotFoundError, /No pending invitation 40/);
    }
  });

  it('removes a collaborator who joined by invitation like any other', () => {
    spec.given(joined).when(remove()).then([{ type: 'CollaboratorRemoved', data: { projectId: 3, userId: BOB, removed: at } }]);
  });
});

describe('a deleted project', () => {
  it('refuses invitations and answers to pending ones', () => {
    const deleted = history(create, invite(), { type: 'DeleteProject', data: { scheduledFullDeletionDate: now, now } });
    for (const command of [invite(9, 41), accept(), decline(), withdraw()]) spec.given(deleted).when(command).thenThrows(NotFoundError, /deleted/);
  });
});
