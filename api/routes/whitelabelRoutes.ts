import { impulseBlockCatalog } from '../../domain/impulse/blockCatalog';
import { NotFoundError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { intParam, operation, type Operation } from '../http/operation';

/** White labels: none can be created yet, so every identifier is unknown. */
export function whitelabelOperations(_deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'getWhitelabelDomain',
      method: 'get',
      path: '/api/whitelabel/:whitelabelIdentifier/domain',
      summary: "A white label's domain",
      auth: 'none',
      async handler({ params }) {
        const id = intParam(params, 'whitelabelIdentifier');
        throw new NotFoundError(`White label ${id} not found`, 'WHITELABEL_NOT_FOUND');
      },
    }),
    operation({
      operationId: 'getAllImpulseBlocks',
      method: 'get',
      path: '/api/whitelabel/:whitelabelIdentifier/impulse/blocks',
      summary: "The impulse blocks a white label's projects can use",
      auth: 'any',
      async handler({ params }) {
        intParam(params, 'whitelabelIdentifier');
        // White labels cannot restrict the catalog yet: every one offers the official blocks.
        return impulseBlockCatalog();
      },
    }),
  ];
}
