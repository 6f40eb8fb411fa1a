import type { DomainEvent } from '../shared/decider';

export const organizationStream = (organizationId: number): string => `organization-${organizationId}`;

export type OrganizationCreated = DomainEvent<
  'OrganizationCreated',
  {
    organizationId: number;
    name: string;
    /** A user's personal organization. */
    isDeveloperProfile: boolean;
    ownerUserId: number;
    trialId: number | null;
    created: string;
  }
>;

export type OrganizationEvent = OrganizationCreated;
