import { describe, it } from 'vitest';
import { organizationDecider, type OrganizationCommand } from '../../domain/organization/organizationDecider';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(organizationDecider);
const now = new Date('2026-11-25T10:00:00.000Z');
const create = (name: string): OrganizationCommand => ({
  type: 'CreateOrganization',
  data: { organizationId: 4, name, isDeveloperProfile: false, ownerUserId: 7, trialId: null, now },
});
const created = { type: 'OrganizationCreated' as const, data: { organizationId: 4, name: 'Analytical Engines', isDeveloperProfile: false, ownerUserId: 7, trialId: null, created: now.toISOString() } };

describe('an organization that does not exist yet', () => {
  it('is created with its trimmed name', () => {
    spec.given([]).when(create(' Analytical Engines ')).then([created]);
  });

  it('is refused an empty or over-long name', () => {
    spec.given([]).when(create('  ')).thenThrows(ValidationError, /1 to 128 characters/);
    spec.given([]).when(create('x'.repeat(129))).thenThrows(ValidationError, /1 to 128 characters/);
  });

  it('is refused a name with a control character or a direction override, naming the field', () => {
    spec.given([]).when(create('Analytical\u0000Engines')).thenThrows(ValidationError, /Organization name \("name"\) contains a control character \(U\+0000\)/);
    spec.given([]).when(create('Analytical\u202EEngines')).thenThrows(ValidationError, /\("name"\) contains an invisible formatting character \(U\+202E\)/);
  });
});

describe('an existing organization', () => {
  it('cannot be created again', () => {
    spec.given([created]).when(create('Again')).thenThrows(ConflictError, /already exists/);
  });
});
