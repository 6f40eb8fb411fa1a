// Every saga's name, for what must know them without running them: `npm run rebuild` keeps their
// checkpoints (saga progress is not a read model; dropping it made every saga read the whole log again
// at the next start). A saga added to the service is added here.
import { JOB_NOTIFICATION_SAGA } from '../jobs/jobNotificationSaga';
import { JOB_WORKER_SAGA } from '../jobs/jobWorker';
import { OAUTH_GRANT_ENDINGS_SAGA } from '../oauth/oauthGrantEndings';
import { TUNER_RUN_END_SAGA } from '../optimize/tunerRunEndSaga';
import { EMAIL_DELIVERY_SAGA } from './emailDeliverySaga';

export const SAGA_NAMES: readonly string[] = [EMAIL_DELIVERY_SAGA, JOB_NOTIFICATION_SAGA, JOB_WORKER_SAGA, TUNER_RUN_END_SAGA, OAUTH_GRANT_ENDINGS_SAGA];
