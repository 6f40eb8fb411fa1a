// oidc-provider, imported once for the service without its Node 22 warning (./runtimeWarningFilter.ts).
import { restoreConsoleWarn } from './runtimeWarningFilter';
import Provider, { errors, interactionPolicy } from 'oidc-provider';

restoreConsoleWarn();

export { errors, interactionPolicy, Provider };
export type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
