// The token a client opens the job websocket with (sdk-reference 3.1): short-lived, bound to the
// caller and to this project, and good for nothing else.
import type { ApiDeps } from '../apiDeps';
import type { Principal } from '../auth/principal';
import { operation, type Operation } from '../http/operation';
import type { SocketCaller } from '../socket/socketTokens';

const callerOf = (p: Principal): SocketCaller => (p.kind === 'user' ? { kind: 'user', userId: p.user.id } : { kind: 'apiKey', apiKeyId: p.apiKeyId });

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
        const { socketToken, expires } = await deps.tokens.socket.issue(callerOf(principal), project.id, new Date());
        return { token: { socketToken, expires: expires.toISOString() } };
      },
    }),
  ];
}
