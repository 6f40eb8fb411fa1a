// The token a client opens the job websocket with (sdk-reference 3.1): short-lived, bound to the
// caller's grant (session or key) and to this project, and good for nothing else.
import type { ApiDeps } from '../apiDeps';
import { grantOf } from '../auth/grants';
import { operation, type Operation } from '../http/operation';

export function socketTokenOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'getSocketToken',
      method: 'get',
      path: '/api/:projectId/socket-token',
      summary: "A short-lived token for the websocket that streams this project's job output",
      auth: 'any',
      // Following a job's output is reading the project.
      projectAccess: 'read',
      async handler({ principal, project }) {
        const { socketToken, expires } = await deps.tokens.socket.issue(grantOf(principal), project.id, new Date());
        return { token: { socketToken, expires: expires.toISOString() } };
      },
    }),
  ];
}
