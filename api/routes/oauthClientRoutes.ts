// A user's own OAuth2 clients (issue 27; docs/oauth.md): registered with a session JWT only, the
// secret answered once and kept only as its hash. The deciders hold the redirect-URI rules; the
// schemas only bound what may reach them.
import { z } from 'zod';
import { deleteOAuthClient, registerOAuthClient } from '../../commands/oauth/oauthClientCommands';
import { MAX_REDIRECT_URI_LENGTH, MAX_REDIRECT_URIS } from '../../domain/oauth/redirectUris';
import { NAME_RULE } from '../../domain/shared/textRules';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { signedInUser } from '../auth/userTarget';
import { operation, type Operation } from '../http/operation';
import { withTextRule } from '../http/withTextRule';

// One more than allowed, so that the decider's message (which names the limit) is the one given.
const RegisterOAuthClientRequest = z
  .object({
    name: z.string().max(NAME_RULE.max).superRefine(withTextRule(NAME_RULE)),
    redirectUris: z.array(z.string().max(MAX_REDIRECT_URI_LENGTH + 1)).max(MAX_REDIRECT_URIS + 1),
  })
  .strict();

export function oauthClientOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'registerOAuthClient',
      method: 'post',
      path: '/api/oauth/clients',
      summary: 'Register an OAuth2 application of your own; its secret is in this answer only',
      auth: 'jwt',
      body: RegisterOAuthClientRequest,
      async handler({ principal, body, requestId, settle }) {
        const user = signedInUser(principal);
        // Counted on the read model, which has the user's own earlier registrations (each answer waits for it).
        const liveClients = (await deps.oauthClients.forOwner(user.id)).length;
        const { clientId, clientSecret, position } = await registerOAuthClient(
          deps.events,
          { ownerUserId: user.id, name: body.name, redirectUris: body.redirectUris, liveClients },
          requestContext(principal, requestId),
        );
        await settle(position);
        return { clientId, clientSecret };
      },
    }),
    operation({
      operationId: 'listOAuthClients',
      method: 'get',
      path: '/api/oauth/clients',
      summary: 'Your OAuth2 applications, oldest first, without their secrets',
      auth: 'jwt',
      async handler({ principal }) {
        const clients = await deps.oauthClients.forOwner(signedInUser(principal).id);
        return { clients: clients.map((c) => ({ clientId: c.clientId, name: c.name, redirectUris: c.redirectUris, registered: c.registered })) };
      },
    }),
    operation({
      operationId: 'deleteOAuthClient',
      method: 'delete',
      path: '/api/oauth/clients/:clientId',
      summary: 'Delete one of your OAuth2 applications; every token it holds ends',
      auth: 'jwt',
      async handler({ principal, params, requestId, settle }) {
        await settle(await deleteOAuthClient(deps.events, { clientId: params.clientId ?? '', requestedBy: signedInUser(principal).id }, requestContext(principal, requestId)));
        return {};
      },
    }),
  ];
}
