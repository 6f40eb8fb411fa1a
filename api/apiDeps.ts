import type { IdAllocator } from '../commands/idAllocator';
import type { UniquenessReservations } from '../commands/uniqueness';
import type { ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import type { ProjectQueries } from '../projections/projects/projectQueries';
import type { UserQueries } from '../projections/users/userQueries';
import type { EventStore } from '../stores/eventstore/eventStore';
import type { TokenService } from './auth/tokens';

export interface ApiSettings {
  /** Public sign-up through POST /api-user-create. */
  signupEnabled: boolean;
  /** Where the service is reached from outside, for links (`studioUrl`). */
  publicUrl: string;
}

/** What the route factories need; built once by the composition root. */
export interface ApiDeps {
  events: EventStore;
  ids: IdAllocator;
  reservations: UniquenessReservations;
  users: UserQueries;
  projects: ProjectQueries;
  apiKeys: ApiKeyQueries;
  tokens: TokenService;
  settings: ApiSettings;
}
