// The indexes every read model's queries need, by collection: each read store creates them at start
// (see stores/readstore/indexDeclarations.ts), and test/projections/readModelIndexes.int.spec.ts checks
// that the hot queries use them.
import type { ReadModelIndexes } from '../stores/readstore/indexDeclarations';
import { API_KEY_INDEXES, API_KEYS } from './apiKeys/apiKeyDocument';
import { DEVICE_INDEXES, DEVICES } from './devices/deviceDocument';
import { EMAIL_INDEXES, EMAILS } from './emails/emailDocument';
import { IMPULSE_INDEXES, IMPULSES } from './impulses/impulseDocument';
import { JOB_INDEXES, JOB_OUTPUT, JOB_OUTPUT_INDEXES, JOBS } from './jobs/jobDocument';
import { HISTORY, HISTORY_INDEXES } from './history/historyDocument';
import { OAUTH_CLIENT_INDEXES, OAUTH_CLIENTS } from './oauthClients/oauthClientDocument';
import { OAUTH_GRANT_INDEXES, OAUTH_GRANTS } from './oauthGrants/oauthGrantDocument';
import { ORGANIZATION_API_KEY_INDEXES, ORGANIZATION_API_KEYS, ORGANIZATION_INDEXES, ORGANIZATIONS } from './organizations/organizationDocument';
import { WHITELABEL_INDEXES, WHITELABELS } from './whitelabels/whitelabelDocument';
import { PROJECT_INDEXES, PROJECTS } from './projects/projectDocument';
import { SAMPLE_INDEXES, SAMPLES } from './samples/sampleDocument';
import { VERSION_INDEXES, VERSIONS } from './versions/versionDocument';
import { TRIAL_INDEXES, TRIALS, USER_INDEXES, USERS } from './users/userDocument';
import { TUNER_RUN_INDEXES, TUNER_RUNS, TUNER_TRIAL_INDEXES, TUNER_TRIALS } from './tunerRuns/tunerRunDocument';

export const readModelIndexes: ReadModelIndexes = {
  [API_KEYS]: API_KEY_INDEXES,
  [DEVICES]: DEVICE_INDEXES,
  [EMAILS]: EMAIL_INDEXES,
  [IMPULSES]: IMPULSE_INDEXES,
  [JOBS]: JOB_INDEXES,
  [JOB_OUTPUT]: JOB_OUTPUT_INDEXES,
  [OAUTH_CLIENTS]: OAUTH_CLIENT_INDEXES,
  [OAUTH_GRANTS]: OAUTH_GRANT_INDEXES,
  [ORGANIZATIONS]: ORGANIZATION_INDEXES,
  [ORGANIZATION_API_KEYS]: ORGANIZATION_API_KEY_INDEXES,
  [WHITELABELS]: WHITELABEL_INDEXES,
  [HISTORY]: HISTORY_INDEXES,
  [PROJECTS]: PROJECT_INDEXES,
  [SAMPLES]: SAMPLE_INDEXES,
  [USERS]: USER_INDEXES,
  [TRIALS]: TRIAL_INDEXES,
  [VERSIONS]: VERSION_INDEXES,
  [TUNER_RUNS]: TUNER_RUN_INDEXES,
  [TUNER_TRIALS]: TUNER_TRIAL_INDEXES,
};
