// Versions (sdk-reference 2.6; the spec's "update version"). A version is made by a job
// (JobsApi.startVersionJob), which records the log position and the content hashes of what the
// project holds; listing, describing and deleting answer from the `versions` read model.
import { z } from 'zod';
import { deleteVersion, updateVersion } from '../../commands/versions/versionCommands';
import { VERSION_JOB, type VersionJobParameters } from '../../commands/versions/versionJob';
import { DomainError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { DESCRIPTION_RULE } from '../../domain/version/versionDecider';
import type { VersionDocument } from '../../projections/versions/versionDocument';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';
import { photoUrl } from '../views/userView';
import { requestProjectJob } from './projectJobRequest';
import { buildImpulseRuntimeSpec } from '../../commands/classify/impulseRuntimeSpec';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import { runtimeSpecDeps } from './classifyRoutes';
import { selectedImpulseId } from './selectedImpulse';

const description = z.string().max(DESCRIPTION_RULE.max);
/** The SDK's ProjectVersionRequest. Versions live in this service's own log: no bucket, nothing public. */
const ProjectVersionRequest = z.object({ description, makePublic: z.boolean(), bucketId: z.number().int().optional(), runModelTestingWhileVersioning: z.boolean().optional() }).strict();
const UpdateVersionRequest = z.object({ description: description.optional() }).strict();

function versionView(v: VersionDocument, users: ReadonlyMap<number, UserDocument>, publicUrl: string): Record<string, unknown> {
  const user = v.createdByUserId === null ? undefined : users.get(v.createdByUserId);
  return {
    id: v.versionId,
    version: v.number,
    description: v.description,
    bucket: { path: `versions/${v.versionId}` },
    created: v.created,
    ...(user ? { userId: user.id, userName: user.name ?? user.username, ...(user.photo ? { userPhoto: photoUrl(publicUrl, user.photo) } : {}) } : {}),
    ...(v.trainingAccuracy === null ? {} : { trainingAccuracy: v.trainingAccuracy }),
    ...(v.testAccuracy === null ? {} : { testAccuracy: v.testAccuracy }),
    totalSamplesCount: String(v.totalSamplesCount),
  };
}

export function versionOperations(deps: ApiDeps): Operation[] {
  const liveVersion = async (projectId: number, versionId: number): Promise<VersionDocument> => {
    const version = await deps.versions.byId(projectId, versionId);
    if (!version) throw new NotFoundError(`Version ${versionId} does not exist in this project`, 'VERSION_NOT_FOUND');
    return version;
  };
  /** What model testing will test, refused (400 naming the problem) when it cannot run, as startClassifyJob refuses it. */
  const modelTestingFor = async (project: ProjectDocument): Promise<Pick<VersionJobParameters, 'runModelTesting' | 'impulseId'>> => {
    const built = await buildImpulseRuntimeSpec(runtimeSpecDeps(deps), project.id, await selectedImpulseId(deps.impulses, project, undefined)).catch((error: unknown) => {
      // The impulse is missing or untrained: a problem with this request, not an unknown resource.
      if (error instanceof DomainError && error.status < 500) throw new ValidationError(`runModelTestingWhileVersioning: ${error.message}`, error.code);
      throw error;
    });
    if ((await deps.samples.count(project.id, { category: 'testing' })) === 0) throw new ValidationError('runModelTestingWhileVersioning: there is no testing data to test the model on; add testing samples or version without it', 'NO_TESTING_DATA');
    return { runModelTesting: true, impulseId: built.spec.impulseId };
  };
  return [
    operation({
      operationId: 'startVersionJob',
      method: 'post',
      path: '/api/:projectId/jobs/version',
      summary: "Start a job that versions the project: the log position and the content hashes of its data, impulses, features and models",
      auth: 'any',
      body: ProjectVersionRequest,
      async handler({ body, project, principal, requestId, settle }) {
        if (body.makePublic) throw new ValidationError('Public versions are not offered by this service: send makePublic false', 'PUBLIC_VERSIONS_UNSUPPORTED');
        if (body.bucketId !== undefined) throw new ValidationError('Versions are kept in the project\'s own log: this service has no storage buckets, leave bucketId out', 'BUCKETS_UNSUPPORTED');
        const testing = body.runModelTestingWhileVersioning ? await modelTestingFor(project) : {};
        const versionId = await deps.ids.next('version');
        const parameters: VersionJobParameters = { versionId, description: body.description, createdByUserId: principal.kind === 'user' ? principal.user.id : null, ...testing };
        const id = await requestProjectJob(
          { events: deps.events, ids: deps.ids, projects: deps.projects },
          { principal, settle },
          { projectId: project.id, category: 'Create version', categoryKey: VERSION_JOB, key: String(versionId), parameters: { ...parameters }, notificationList: null },
          requestContext(principal, requestId),
        );
        return { id };
      },
    }),
    operation({
      operationId: 'listVersions',
      method: 'get',
      path: '/api/:projectId/versions',
      summary: "The project's versions, newest first, and the number the next one gets",
      auth: 'any',
      async handler({ project }) {
        const versions = await deps.versions.forProject(project.id);
        const ids = [...new Set(versions.map((v) => v.createdByUserId).filter((id): id is number => id !== null))];
        const users = new Map((await deps.users.byIds(ids)).map((u) => [u.id, u]));
        return {
          nextVersion: await deps.versions.nextNumber(project.id),
          versions: versions.map((v) => versionView(v, users, deps.settings.publicUrl)),
          customLearnBlocks: [],
          runModelTestingWhileVersioning: false,
        };
      },
    }),
    operation({
      operationId: 'updateVersion',
      method: 'post',
      path: '/api/:projectId/versions/:versionId',
      summary: "Change a version's description",
      auth: 'any',
      body: UpdateVersionRequest,
      async handler({ body, params, project, principal, requestId, settle }) {
        const versionId = intParam(params, 'versionId');
        await liveVersion(project.id, versionId);
        if (body.description !== undefined) await settle(await updateVersion(deps.events, { projectId: project.id, versionId, description: body.description }, requestContext(principal, requestId)));
        return {};
      },
    }),
    operation({
      operationId: 'deleteVersion',
      method: 'delete',
      path: '/api/:projectId/versions/:versionId',
      summary: 'Delete a version (its number is not given again)',
      auth: 'any',
      async handler({ params, project, principal, requestId, settle }) {
        const versionId = intParam(params, 'versionId');
        await liveVersion(project.id, versionId);
        await settle(await deleteVersion(deps.events, { projectId: project.id, versionId }, requestContext(principal, requestId)));
        return {};
      },
    }),
  ];
}
