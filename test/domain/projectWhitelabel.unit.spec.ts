// Project creation and white labels: which white label a new project belongs to, and the
// free-project switch of the white label whose domain the request came to.
import { describe, expect, it } from 'vitest';
import { projectDecider, type HostWhitelabel, type ProjectCommand } from '../../domain/project/projectDecider';
import type { ProjectCreated } from '../../domain/project/projectEvents';
import { ForbiddenError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(projectDecider);
const now = new Date('2026-11-26T10:00:00.000Z');

const create = (where: { hostWhitelabel?: HostWhitelabel; ownerOrganization?: { organizationId: number; whitelabelId: number | null } } = {}): ProjectCommand => ({
  type: 'CreateProject',
  data: {
    projectId: 3,
    name: 'Gestures',
    ownerUserId: 7,
    isPublic: false,
    developmentApiKey: { id: 11, key: 'ei_0123456789abcdef', hash: 'hash-of-key' },
    developmentHmacKey: { id: 12, key: 'hmac-secret' },
    ...where,
    now,
  },
});

const base = { projectId: 3, name: 'Gestures', description: '', ownerUserId: 7, isPublic: false, created: now.toISOString() };

/** The ProjectCreated event the command appends (the collaborator and keys after it are covered by projectDecider.unit.spec). */
const created = (events: { type: string; data: unknown }[]) => events.find((e): e is ProjectCreated => e.type === 'ProjectCreated')!.data;

const open: HostWhitelabel = { whitelabelId: 5, allowFreeProjects: true };
const closed: HostWhitelabel = { whitelabelId: 5, allowFreeProjects: false };

describe('a project that does not exist yet', () => {
  it('is made in no white label on the main host, and its event carries no white label field (as events written before)', () => {
    spec.given([]).when(create()).thenMatches((events) => expect(created(events)).toStrictEqual(base));
  });

  it("is made in the white label of the request's host", () => {
    spec.given([]).when(create({ hostWhitelabel: open })).thenMatches((events) => expect(created(events)).toStrictEqual({ ...base, whitelabelId: 5 }));
  });

  it('is made in the white label of the organization that owns it, off any white label domain', () => {
    spec
      .given([])
      .when(create({ ownerOrganization: { organizationId: 9, whitelabelId: 6 } }))
      .thenMatches((events) => expect(created(events)).toStrictEqual({ ...base, whitelabelId: 6, ownerOrganizationId: 9 }));
  });

  it('is made in no white label when its organization belongs to none', () => {
    spec
      .given([])
      .when(create({ ownerOrganization: { organizationId: 9, whitelabelId: null } }))
      .thenMatches((events) => expect(created(events)).toStrictEqual({ ...base, ownerOrganizationId: 9 }));
  });

  it("belongs to the host's white label when made there in an organization of another white label", () => {
    spec
      .given([])
      .when(create({ hostWhitelabel: open, ownerOrganization: { organizationId: 9, whitelabelId: 6 } }))
      .thenMatches((events) => expect(created(events)).toStrictEqual({ ...base, whitelabelId: 5, ownerOrganizationId: 9 }));
  });

  describe('on the domain of a white label without free projects', () => {
    it('is refused as a personal project, naming the switch', () => {
      spec.given([]).when(create({ hostWhitelabel: closed })).thenThrows(ForbiddenError, /allowFreeProjects is false/);
    });

    it('is refused in an organization of no white label or of another one', () => {
      spec.given([]).when(create({ hostWhitelabel: closed, ownerOrganization: { organizationId: 9, whitelabelId: null } })).thenThrows(ForbiddenError, /allowFreeProjects/);
      spec.given([]).when(create({ hostWhitelabel: closed, ownerOrganization: { organizationId: 9, whitelabelId: 6 } })).thenThrows(ForbiddenError, /allowFreeProjects/);
    });

    it('is made in an organization of that white label', () => {
      spec
        .given([])
        .when(create({ hostWhitelabel: closed, ownerOrganization: { organizationId: 9, whitelabelId: 5 } }))
        .thenMatches((events) => expect(created(events)).toStrictEqual({ ...base, whitelabelId: 5, ownerOrganizationId: 9 }));
    });
  });
});
