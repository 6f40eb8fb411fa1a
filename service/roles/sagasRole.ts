// The sagas role: the event-driven sagas (commands/sagas/: e-mail delivery, job notifications) and
// the periodic ones: subscriptions that end, projects due for full deletion, and the audit log's
// checkpoints (commands/audit/logCheckpointer.ts).
import type { Logger } from 'pino';
import { startLogCheckpoints } from '../../commands/audit/logCheckpointer';
import { ProjectBlobs } from '../../commands/projects/projectBlobs';
import { startSagas } from '../../commands/sagas';
import { startProjectDeletion } from '../../commands/sagas/projectDeletion';
import { startSubscriptionEnd } from '../../commands/sagas/subscriptionEnd';
import { OrganizationQueries } from '../../projections/organizations/organizationQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import { TunerRunQueries } from '../../projections/tunerRuns/tunerRunQueries';
import { UserQueries } from '../../projections/users/userQueries';
import type { Stores } from '../composition';
import type { Config } from '../configuration';

export interface SagasRole {
  /** Ends due subscriptions now, rather than at the next interval (tests, operators). */
  endDueSubscriptions(now?: Date): Promise<void>;
  /** Runs the full deletion of deleted projects due by `now` (normally done every minute). */
  fullyDeleteDueProjects(now?: Date): Promise<void>;
  stop(): Promise<void>;
}

export async function startSagasRole(deps: { stores: Stores; config: Config; log: Logger }): Promise<SagasRole> {
  const { stores, config } = deps;
  const log = deps.log.child({ role: 'sagas' });
  const users = new UserQueries(stores.readStore);
  const projects = new ProjectQueries(stores.readStore);
  const organizations = new OrganizationQueries(stores.readStore);
  const sagas = await startSagas({
    events: stores.events,
    readStore: stores.readStore,
    log,
    smtpUrl: config.smtpUrl,
    jobNotifications: {
      mailFrom: config.mailFrom,
      // Only a collaborator of the job's project, or a member of its organization, hears of it.
      recipient: async (userId, job) => {
        const [u, project] = await Promise.all([users.byId(userId), job.projectId === null ? null : projects.byId(job.projectId)]);
        if (job.projectId !== null && !project?.collaboratorIds.includes(userId)) return null;
        if (job.projectId === null && job.organizationId !== null && !(await organizations.byId(job.organizationId))?.memberIds.includes(userId)) return null;
        return u && typeof u.email === 'string' && u.email !== '' && !u.deletedDate ? { email: u.email, name: u.name ?? u.username } : null;
      },
    },
  });
  const subscriptionEnd = startSubscriptionEnd({
    events: stores.events,
    due: async (now) => (await users.endedSubscriptions(now)).map((u) => ({ userId: u.id, periodEnd: u.subscription.periodEnd ?? '' })),
    log,
  });
  const logCheckpoints = startLogCheckpoints(stores.events, log, config.auditCheckpointMs);
  const tunerRuns = new TunerRunQueries(stores.readStore);
  const projectBlobs = new ProjectBlobs({
    events: stores.events,
    samples: new SampleQueries(stores.readStore),
    liveProjectIds: () => projects.notFullyDeletedIds(),
    isUserPhoto: async (sha256) => (await users.byPhoto(sha256)) !== null,
    tunerRuns: { coordinatorJobIds: async (projectId) => (await tunerRuns.forProject(projectId)).map((r) => r.coordinatorJobId) },
  });
  const projectDeletion = startProjectDeletion({
    events: stores.events,
    due: (now) => projects.dueForFullDeletion(now),
    duePurges: async (before) => (await projects.dueForBlobPurge(before)).map((p) => ({ id: p.id, quarantinedBlobs: p.quarantinedBlobs ?? [] })),
    contentsOf: (projectId) => projectBlobs.contentsOf(projectId),
    usedElsewhere: (projectId, sha256s) => projectBlobs.usedElsewhere(projectId, sha256s),
    blobs: stores.blobs,
    destroyProjectKey: (projectId) => stores.events.destroySubject(`project-${projectId}`),
    log,
  });
  return {
    endDueSubscriptions: (now) => subscriptionEnd.runOnce(now),
    fullyDeleteDueProjects: (now) => projectDeletion.runOnce(now),
    async stop() {
      await subscriptionEnd.stop();
      await projectDeletion.stop();
      await logCheckpoints.stop();
      await sagas.stop();
    },
  };
}
