// A project's deployment builds. A record is checked to be well-formed (hashes, ids, bounded text)
// so no value can break a projection, and a retried job records its build once.
import type { Decider } from '../shared/decider';
import { ValidationError } from '../shared/errors';
import { checkId, checkIsoTimestamp, checkNumber } from '../shared/numberRules';
import { checkText, NAME_RULE } from '../shared/textRules';
import type { DeploymentBuilt, DeploymentEvent } from './deploymentEvents';

export type DeploymentCommand = { type: 'RecordDeployment'; data: DeploymentBuilt['data'] };

export interface DeploymentState {
  jobIds: ReadonlySet<number>;
}

const SHA256 = /^[0-9a-f]{64}$/;
/** Artifacts are held whole in memory when built: far above any impulse this service trains. */
const MAX_ARTIFACT_BYTES = 2 ** 31;

function checkHash(value: string, field: string): void {
  if (typeof value !== 'string' || !SHA256.test(value)) throw new ValidationError(`${field} must be a SHA-256 in hex`);
}

function checkRecord(d: DeploymentBuilt['data']): DeploymentBuilt['data'] {
  for (const [v, f] of [[d.projectId, 'projectId'], [d.impulseId, 'impulseId'], [d.jobId, 'jobId'], [d.version, 'version']] as const) checkId(v, f);
  checkText(d.type, 'type', { max: 64 });
  checkText(d.engine, 'engine', { max: 64 });
  checkHash(d.artifact, 'artifact');
  checkNumber(d.size, 'size', { min: 0, max: MAX_ARTIFACT_BYTES, integer: true });
  checkText(d.fileName, 'fileName', NAME_RULE);
  if (/[/\\"]/.test(d.fileName)) throw new ValidationError('fileName must not hold a slash, a backslash or a quote');
  if (d.models.length === 0) throw new ValidationError('models: a build embeds at least one trained model');
  d.models.forEach((m, i) => {
    checkId(m.learnId, `models[${i}].learnId`);
    if (m.type !== 'keras' && m.type !== 'anomaly') throw new ValidationError(`models[${i}].type must be keras or anomaly`);
    checkHash(m.model, `models[${i}].model`);
  });
  checkIsoTimestamp(d.built, 'built');
  return d;
}

export const deploymentDecider: Decider<DeploymentCommand, DeploymentEvent, DeploymentState> = {
  initialState: () => ({ jobIds: new Set() }),
  decide(command, state) {
    const data = checkRecord(command.data);
    if (state.jobIds.has(data.jobId)) return [];
    return [{ type: 'DeploymentBuilt', data }];
  },
  evolve(state, event) {
    return { jobIds: new Set([...state.jobIds, event.data.jobId]) };
  },
};
