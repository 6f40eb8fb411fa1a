// Why a start failed, in one line, when it is the operator's situation to resolve rather than a fault
// of ours: a stack trace would only hide the sentence that says what to do.
import { DataFolderBusyError } from './dataFolderLock';
import { ReadModelsRefusedError } from './readModelsAtStart';
import { RoleThreadError } from './roles/roleThread';

interface ListenError {
  code?: string;
  port?: number;
  address?: string;
}

/** The one-line message for a failure the operator resolves; undefined for the others (shown in full). */
export function operatorMessage(error: unknown): string | undefined {
  if (error instanceof DataFolderBusyError || error instanceof ReadModelsRefusedError) return error.message;
  // The same, met by the thread of THREAD_ROLES as it started its roles.
  if (error instanceof RoleThreadError && error.operatorMessage !== undefined) return error.operatorMessage;
  const listen = error as ListenError | null;
  if (listen?.code === 'EADDRINUSE') {
    return `Port ${listen.port ?? '?'} on ${listen.address ?? 'this host'} is already in use (another instance of the service, or another program): stop it, or choose other ports (API_PORT, INGESTION_PORT, INGESTION_TLS_PORT, REMOTE_MGMT_PORT)`;
  }
  if (listen?.code === 'EACCES' && listen.port !== undefined) {
    return `Port ${listen.port} on ${listen.address ?? 'this host'} may not be opened by this user (ports below 1024 need privileges): choose another port (API_PORT, INGESTION_PORT, INGESTION_TLS_PORT, REMOTE_MGMT_PORT)`;
  }
  return undefined;
}
