import type { DeviceEvent } from '../../domain/device/deviceEvents';
import type { ImpulseEvent } from '../../domain/impulse/impulseEvents';
import type { ProjectEvent } from '../../domain/project/projectEvents';
import type { UserDeleted } from '../../domain/user/userEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { describeChange } from '../../domain/project/projectSettings';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, positionKey, storableKeys, updateOnce } from '../projection';
import { PROJECTS, type ProjectDocument, type ProjectInvitationEntry } from './projectDocument';
import { readmeHtml } from './readmeHtml';

const projects = (store: ReadStore) => store.collection<ProjectDocument>(PROJECTS);

/**
 * `lastModified` and its details follow every change of the project. `_modifiedPosition` is the
 * position of the event that set them (events that set no lastModified move `_position` too): the
 * samples projection keeps the last sample change in its own document, and ProjectQueries shows
 * whichever of the two is later in the log.
 */
const modified = (when: string, details: string, event: StoredEvent) => ({ lastModified: when, lastModificationDetails: details, _modifiedPosition: positionKey(event.position) });

/** Changes made elsewhere that still change the project, for `lastModified`. */
const touch = (details: (data: Record<string, unknown>) => string) =>
  async (event: StoredEvent, store: ReadStore): Promise<void> => {
    const data = event.data as Record<string, unknown>;
    await updateOnce(projects(store), Number(data.projectId), { $set: modified(event.metadata.time, details(data), event) }, event);
  };

export const projectsProjection = defineProjection<ProjectEvent | ImpulseEvent | DeviceEvent | UserDeleted>('projects', [PROJECTS], {
  ImpulseCreated: touch((d) => `Impulse "${String(d.name)}" created`),
  ImpulseBlocksReplaced: touch((d) => `Impulse "${String(d.name)}" changed`),
  ImpulseUpdated: touch((d) => `Impulse ${String(d.impulseId)} updated`),
  ImpulseDeleted: touch((d) => `Impulse ${String(d.impulseId)} deleted`),
  DspConfigSet: touch((d) => `DSP block ${String(d.dspId)} configured`),
  DspBlockCleared: touch((d) => `DSP block ${String(d.dspId)} cleared`),
  DeviceCreated: touch((d) => `Device ${String(d.deviceId)} added`),
  DeviceRenamed: touch((d) => `Device ${String(d.deviceId)} renamed`),
  DeviceDeleted: touch((d) => `Device ${String(d.deviceId)} deleted`),

  async ProjectCreated(event, store) {
    const d = event.data;
    await insertOnce(
      projects(store),
      {
        _id: d.projectId,
        id: d.projectId,
        name: d.name,
        description: d.description,
        created: d.created,
        ownerUserId: d.ownerUserId,
        isPublic: d.isPublic,
        whitelabelId: d.whitelabelId ?? null,
        ownerOrganizationId: d.ownerOrganizationId ?? null,
        collaborators: [],
        collaboratorIds: [],
        invitations: [],
        invitedUserIds: [],
        developmentApiKey: null,
        developmentApiKeyId: null,
        developmentHmacKey: null,
        hmacKeys: {},
        settings: {},
        readme: null,
        lastModified: d.created,
        lastModificationDetails: 'Project created',
        deleted: false,
        deletedDate: null,
        scheduledFullDeletionDate: null,
        fullDeletionDate: null,
        _position: '',
      },
      event,
    );
  },

  async CollaboratorAdded(event, store) {
    const d = event.data;
    await updateOnce(
      projects(store),
      d.projectId,
      {
        $push: { collaborators: { userId: d.userId, isOwner: d.isOwner, added: d.added }, collaboratorIds: d.userId },
        ...(d.isOwner ? {} : { $set: modified(d.added, 'Collaborator added', event) }),
      },
      event,
    );
  },

  async CollaboratorInvited(event, store) {
    const d = event.data;
    await updateOnce(
      projects(store),
      d.projectId,
      {
        $push: {
          invitations: { invitationId: d.invitationId, userId: d.userId, invitedAs: d.invitedAs, invitedByUserId: d.invitedByUserId, invited: d.invited },
          // A name with no account has no invitee to list it for.
          ...(d.userId === null ? {} : { invitedUserIds: d.userId }),
        },
        $set: modified(d.invited, 'Collaborator invited', event),
      },
      event,
    );
  },

  // The CollaboratorAdded appended with it makes the invitee a collaborator (and moves lastModified).
  CollaboratorInvitationAccepted: (event, store) => invitationAnswered(event, store, null),
  CollaboratorInvitationDeclined: (event, store) => invitationAnswered(event, store, { when: event.data.declined, details: 'Invitation declined' }),
  CollaboratorInvitationWithdrawn: (event, store) => invitationAnswered(event, store, { when: event.data.withdrawn, details: 'Invitation withdrawn' }),

  // What an inviter typed may be the invitee's e-mail: a deleted user leaves none of it in the read side.
  // Guarded by `_position` but leaving it alone: moved by an event that sets no lastModified, it would
  // refuse the samples projection's lastModified of an earlier sample applied after it (the runner
  // applies a batch lane by lane). Applied again, it removes nothing more.
  async UserDeleted(event, store) {
    const { userId } = event.data;
    for (const project of await projects(store).find({ invitedUserIds: userId })) {
      const invitations = (project.invitations ?? []).filter((i) => i.userId !== userId);
      await projects(store).updateOne({ _id: project._id, _position: { $lt: positionKey(event.position) } }, { $set: { invitations, invitedUserIds: inviteeIds(invitations) } });
    }
  },

  async CollaboratorRemoved(event, store) {
    const d = event.data;
    const project = await projects(store).findOne({ _id: d.projectId });
    if (!project) return;
    const settings = project.settings ?? {};
    // Someone who leaves the project is no longer notified by it.
    const lists = (['trainJobNotificationUids', 'dspJobNotificationUids', 'modelTestingJobNotificationUids', 'exportJobNotificationUids'] as const).flatMap((list) => {
      const uids = settings[list];
      return uids?.includes(d.userId) ? [[`settings.${list}`, uids.filter((u) => u !== d.userId)] as const] : [];
    });
    await updateOnce(
      projects(store),
      d.projectId,
      {
        $set: {
          collaborators: project.collaborators.filter((c) => c.userId !== d.userId),
          collaboratorIds: project.collaboratorIds.filter((id) => id !== d.userId),
          ...Object.fromEntries(lists),
          ...modified(d.removed, 'Collaborator removed', event),
        },
      },
      event,
    );
  },

  async ApiKeyAdded(event, store) {
    const d = event.data;
    const project = await projects(store).findOne({ _id: d.projectId });
    if (!project) return;
    await updateOnce(
      projects(store),
      d.projectId,
      {
        $set: {
          ...(d.isDevelopmentKey ? { developmentApiKey: d.apiKey, developmentApiKeyId: d.apiKeyId } : {}),
          // The keys made with the project are part of "Project created".
          ...(d.created === project.created ? {} : modified(d.created, `API key "${d.name}" added`, event)),
        },
      },
      event,
    );
  },

  async ApiKeyRevoked(event, store) {
    const d = event.data;
    const project = await projects(store).findOne({ _id: d.projectId });
    if (!project) return;
    const wasDevelopmentKey = project.developmentApiKeyId === d.apiKeyId;
    await updateOnce(
      projects(store),
      d.projectId,
      { $set: { ...(wasDevelopmentKey ? { developmentApiKey: null, developmentApiKeyId: null } : {}), ...modified(d.revoked, 'API key revoked', event) } },
      event,
    );
  },

  async HmacKeyAdded(event, store) {
    const d = event.data;
    const project = await projects(store).findOne({ _id: d.projectId });
    if (!project) return;
    // Not the key itself: when the event is delivered again it is there already, and MongoDB refuses
    // an update that sets both `hmacKeys.<id>` and a path inside it, even one that matches nothing.
    const demoted = d.isDevelopmentKey
      ? Object.values(project.hmacKeys ?? {})
          .filter((k) => k.isDevelopmentKey && k.id !== d.hmacKeyId)
          .map((k) => [`hmacKeys.${k.id}.isDevelopmentKey`, false] as const)
      : [];
    await updateOnce(
      projects(store),
      d.projectId,
      {
        $set: {
          [`hmacKeys.${d.hmacKeyId}`]: { id: d.hmacKeyId, name: d.name, hmacKey: d.hmacKey, isDevelopmentKey: d.isDevelopmentKey, created: d.created, createdByUserId: d.createdByUserId, revoked: false },
          ...Object.fromEntries(demoted),
          ...(d.isDevelopmentKey ? { developmentHmacKey: d.hmacKey } : {}),
          ...(d.created === project.created ? {} : modified(d.created, `HMAC key "${d.name}" added`, event)),
        },
      },
      event,
    );
  },

  async HmacKeyRevoked(event, store) {
    const d = event.data;
    const project = await projects(store).findOne({ _id: d.projectId });
    const key = project?.hmacKeys?.[String(d.hmacKeyId)];
    if (!project || !key) return;
    await updateOnce(
      projects(store),
      d.projectId,
      {
        $set: {
          [`hmacKeys.${d.hmacKeyId}.revoked`]: true,
          [`hmacKeys.${d.hmacKeyId}.isDevelopmentKey`]: false,
          ...(key.isDevelopmentKey ? { developmentHmacKey: null } : {}),
          ...modified(d.revoked, `HMAC key "${key.name}" revoked`, event),
        },
      },
      event,
    );
  },

  async ProjectUpdated(event, store) {
    const d = event.data;
    const { name, description, isPublic, readme, ...rest } = d.changes;
    const set: Record<string, unknown> = { ...modified(d.updated, describeChange(d.changes), event) };
    if (name !== undefined) set.name = name;
    if (description !== undefined) set.description = description;
    if (isPublic !== undefined) set.isPublic = isPublic;
    if (readme !== undefined) set.readme = readme === null || readme === '' ? null : { markdown: readme, html: readmeHtml(readme) };
    for (const [key, value] of Object.entries(rest)) {
      // Objects are replaced whole, as the request gives them; performance limits one by one.
      if (key === 'performance') for (const [limit, v] of Object.entries(value as object)) set[`settings.performance.${limit}`] = v;
      // Maps whose keys the client chooses: see storableKeys.
      else if (key === 'metadata' || key === 'csvImportConfig') set[`settings.${key}`] = storableKeys(value);
      else set[`settings.${key}`] = value;
    }
    await updateOnce(projects(store), d.projectId, { $set: set }, event);
  },

  async ProjectDeleted(event, store) {
    const d = event.data;
    await updateOnce(
      projects(store),
      d.projectId,
      { $set: { deleted: true, deletedDate: d.deletedDate, scheduledFullDeletionDate: d.scheduledFullDeletionDate, ...modified(d.deletedDate, 'Project deleted', event) } },
      event,
    );
  },

  async ProjectFullyDeleted(event, store) {
    const d = event.data;
    // The keys' values go; the record of the project stays for the deletion saga and auditors.
    await updateOnce(
      projects(store),
      d.projectId,
      {
        $set: {
          fullDeletionDate: d.fullDeletionDate,
          // Before set-aside blobs were recorded (older logs), they were deleted at once.
          quarantinedBlobs: d.quarantinedBlobs ?? [],
          blobsPurged: d.quarantinedBlobs === undefined,
          developmentApiKey: null,
          developmentHmacKey: null,
          hmacKeys: {},
          readme: null,
          ...modified(d.fullDeletionDate, 'Project fully deleted', event),
        },
      },
      event,
    );
  },

  async ProjectBlobsPurged(event, store) {
    const d = event.data;
    await updateOnce(projects(store), d.projectId, { $set: { blobsPurged: true, quarantinedBlobs: [], ...modified(d.purgedDate, 'Project data purged', event) } }, event);
  },

});

const inviteeIds = (invitations: readonly ProjectInvitationEntry[]): number[] => [...new Set(invitations.flatMap((i) => (i.userId === null ? [] : [i.userId])))];

/** The invitation is no longer pending; the invitee stays out of `invitedUserIds`. */
async function invitationAnswered(
  event: StoredEvent<string, { projectId: number; invitationId: number }>,
  store: ReadStore,
  change: { when: string; details: string } | null,
): Promise<void> {
  const d = event.data;
  const project = await projects(store).findOne({ _id: d.projectId });
  if (!project) return;
  const invitations = (project.invitations ?? []).filter((i) => i.invitationId !== d.invitationId);
  await updateOnce(
    projects(store),
    d.projectId,
    { $set: { invitations, invitedUserIds: inviteeIds(invitations), ...(change ? modified(change.when, change.details, event) : {}) } },
    event,
  );
}
