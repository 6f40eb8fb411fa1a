import type { IdAllocator } from '../commands/idAllocator';
import type { ApiKeyUsageRecorder } from '../commands/projects/projectCommands';
import type { UniquenessReservations } from '../commands/uniqueness';
import type { ThreadPool } from '../commands/jobs/threadPool';
import type { SendEmail } from '../commands/users/accountMail';
import type { ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import type { DeploymentQueries } from '../projections/deployments/deploymentQueries';
import type { DeviceQueries } from '../projections/devices/deviceQueries';
import type { AnomalyModelQueries } from '../projections/anomalyModels/anomalyModelQueries';
import type { DspFeaturesQueries } from '../projections/dspFeatures/dspFeaturesQueries';
import type { HistoryQueries } from '../projections/history/historyQueries';
import type { ImpulseQueries } from '../projections/impulses/impulseQueries';
import type { JobQueries } from '../projections/jobs/jobQueries';
import type { OptimizeConfigQueries } from '../projections/optimizeConfigs/optimizeConfigQueries';
import type { TunerRunQueries } from '../projections/tunerRuns/tunerRunQueries';
import type { OAuthClientQueries } from '../projections/oauthClients/oauthClientQueries';
import type { KerasModelQueries } from '../projections/kerasModels/kerasModelQueries';
import type { ModelTestingQueries } from '../projections/modelTesting/modelTestingQueries';
import type { VersionQueries } from '../projections/versions/versionQueries';
import type { SampleQueries } from '../projections/samples/sampleQueries';
import type { EmailQueries } from '../projections/emails/emailQueries';
import type { OrganizationQueries } from '../projections/organizations/organizationQueries';
import type { WhitelabelQueries } from '../projections/whitelabels/whitelabelQueries';
import type { ProjectQueries } from '../projections/projects/projectQueries';
import type { UserQueries } from '../projections/users/userQueries';
import type { ReadStore } from '../stores/readstore/readStore';
import type { BlobStore } from '../stores/blobstore/blobStore';
import type { SealingEventStore } from '../stores/keystore/sealingEventStore';
import type { IdentityProvider } from './auth/identityProviders';
import type { ValuesDecoder } from './routes/sampleValues';
import type { LoginThrottle } from './auth/loginThrottle';
import type { ResetRequestThrottle } from './auth/resetRequestThrottle';
import type { TokenService } from './auth/tokens';
import type { OAuthServerKeys } from '../service/secrets';

export interface ApiSettings {
  /** Public sign-up through POST /api-user-create. */
  signupEnabled: boolean;
  /** Where the service is reached from outside, for links (`studioUrl`, photo URLs). */
  publicUrl: string;
  /** Usernames that are staff besides the installation's first user. */
  staffUsernames: ReadonlySet<string>;
  /** Where `subscription/upgrade` sends the user, with a checkout id. */
  paymentPortalUrl: string;
  /** Shared with the payment provider: payment notifications carry an HMAC of their body made with it. */
  paymentWebhookSecret: string | undefined;
  /** Internal callers (createProTierUser, createEnterpriseTrialUser) sign their bodies with it. */
  internalApiSecret: string | undefined;
  identityProviders: readonly IdentityProvider[];
  /** Address that support mail (trial, upgrade and feedback requests) goes to. */
  supportEmail: string;
  /** Sender of every e-mail. */
  mailFrom: string;
  /** How long a deleted project's data is kept before its full deletion. */
  projectDeletionDelayMs: number;
  /** Reverse proxies in front whose `X-Forwarded-For` entries the throttles believe (0: the socket's peer only). */
  trustedProxyHops: number;
}

/** What the route factories need; built once by the composition root. */
export interface ApiDeps {
  events: SealingEventStore;
  blobs: BlobStore;
  ids: IdAllocator;
  reservations: UniquenessReservations;
  users: UserQueries;
  projects: ProjectQueries;
  apiKeys: ApiKeyQueries;
  organizations: OrganizationQueries;
  whitelabels: WhitelabelQueries;
  emails: EmailQueries;
  devices: DeviceQueries;
  impulses: ImpulseQueries;
  samples: SampleQueries;
  jobs: JobQueries;
  dspFeatures: DspFeaturesQueries;
  anomalyModels: AnomalyModelQueries;
  kerasModels: KerasModelQueries;
  deployments: DeploymentQueries;
  modelTesting: ModelTestingQueries;
  versions: VersionQueries;
  optimizeConfigs: OptimizeConfigQueries;
  tunerRuns: TunerRunQueries;
  oauthClients: OAuthClientQueries;
  /** The auditors' index of the log. */
  history: HistoryQueries;
  /** The project's read models as of a time, replayed from the log (undefined: no event by then). */
  pointInTime(projectId: number, asOf: string): Promise<ReadStore | undefined>;
  /** The read store's change mark (ReadStore.changeMark), for what is kept while the read models stand still; absent: nothing is kept. */
  changeMark?: () => number;
  tokens: TokenService;
  /** The OAuth authorization server's cookie and signing keys. */
  oauthKeys: OAuthServerKeys;
  /** Guesses of passwords, TOTP tokens and codes. */
  throttle: LoginThrottle;
  /** Password-reset requests, each of which would send a mail. */
  resetRequests: ResetRequestThrottle;
  sendEmail: SendEmail;
  apiKeyUsage: ApiKeyUsageRecorder;
  /** Decodes stored JSON, CBOR and CSV samples for the raw-data view, large ones off the event loop. */
  decodeValues: ValuesDecoder;
  /** Worker threads for the synchronous DSP runs (`dsp/{dspId}/run`), so a block never runs on the HTTP loop. */
  dspPool: ThreadPool;
  settings: ApiSettings;
}
