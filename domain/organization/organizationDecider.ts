import type { Decider } from '../shared/decider';
import { ConflictError, ValidationError, assertNever } from '../shared/errors';
import { checkText } from '../shared/textRules';
import type { OrganizationEvent } from './organizationEvents';

export type OrganizationCommand = {
  type: 'CreateOrganization';
  data: { organizationId: number; name: string; isDeveloperProfile: boolean; ownerUserId: number; trialId: number | null; now: Date };
};

export type OrganizationState = { status: 'none' } | { status: 'active'; organizationId: number; ownerUserId: number };

export const organizationDecider: Decider<OrganizationCommand, OrganizationEvent, OrganizationState> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateOrganization': {
        const c = command.data;
        if (state.status !== 'none') throw new ConflictError(`Organization ${c.organizationId} already exists`);
        const name = c.name.trim();
        if (name === '' || name.length > 128) throw new ValidationError('Organization name must be 1 to 128 characters');
        checkText(name, 'Organization name ("name")', { max: 128 });
        return [
          {
            type: 'OrganizationCreated',
            data: { organizationId: c.organizationId, name, isDeveloperProfile: c.isDeveloperProfile, ownerUserId: c.ownerUserId, trialId: c.trialId, created: c.now.toISOString() },
          },
        ];
      }
      default:
        return assertNever(command.type);
    }
  },
  evolve(_state, event) {
    switch (event.type) {
      case 'OrganizationCreated':
        return { status: 'active', organizationId: event.data.organizationId, ownerUserId: event.data.ownerUserId };
      default:
        return assertNever(event.type);
    }
  },
};
