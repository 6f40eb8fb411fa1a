// An organization's jobs (OrganizationJobsApi, sdk-reference 1.5 and 2.3): the jobs requested for
// the organization itself (`organizationId` on JobRequested). Members and member keys read them;
// admins, admin keys and staff cancel them; guests see none.
import type { ApiDeps } from '../apiDeps';
import { requireOrganization } from '../auth/organizationAccess';
import { grantOf } from '../auth/grants';
import type { Principal } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';
import { scopedJobOperations } from './jobRoutes';

const NEED = { read: 'read', write: 'manage' } as const;

export function organizationJobOperations(deps: ApiDeps): Operation[] {
  const check = (principal: Principal, params: Record<string, string>, access: 'read' | 'write') =>
    requireOrganization(deps, principal, intParam(params, 'organizationId'), NEED[access]);
  return [
    ...scopedJobOperations(deps, {
      prefix: '/api/organizations/:organizationId',
      ids: {
        active: 'listActiveOrganizationJobs',
        finished: 'listFinishedOrganizationJobs',
        all: 'listAllOrganizationJobs',
        status: 'getOrganizationJobStatus',
        cancel: 'cancelOrganizationJob',
        stdout: 'getOrganizationJobsLogs',
        download: 'downloadOrganizationJobsLogs',
      },
      noun: 'organization',
      acceptsOrganizationKey: true,
      async authorize(principal, params, access) {
        await check(principal, params, access);
      },
      async resolve({ principal, params }, access) {
        const { organization } = await check(principal, params, access);
        return { scope: { organizationId: organization.id }, label: `organization ${organization.id}` };
      },
    }),
    operation({
      operationId: 'getOrganizationSocketToken',
      method: 'get',
      path: '/api/organizations/:organizationId/socket-token',
      summary: "A short-lived token for the websocket that streams this organization's job output",
      auth: 'any',
      acceptsOrganizationKey: true,
      async authorize(principal, params) {
        await check(principal, params, 'read');
      },
      async handler({ principal, params }) {
        const { organization } = await check(principal, params, 'read');
        const { socketToken, expires } = await deps.tokens.socket.issue(grantOf(principal), { organizationId: organization.id }, new Date());
        return { token: { socketToken, expires: expires.toISOString() } };
      },
    }),
  ];
}
