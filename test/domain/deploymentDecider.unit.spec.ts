import { describe, it } from 'vitest';
import { deploymentDecider } from '../../domain/deployment/deploymentDecider';
import type { DeploymentBuilt } from '../../domain/deployment/deploymentEvents';
import { artifactFileName, resolveBuild } from '../../domain/deployment/deploymentBuilds';
import { ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';
import { expect } from 'vitest';

const spec = deciderSpecification(deploymentDecider);
const build: DeploymentBuilt['data'] = {
  projectId: 1, impulseId: 2, jobId: 3, version: 4, type: 'wasm', engine: 'tflite', artifact: 'a'.repeat(64), size: 10, fileName: 'motion-v4-wasm.zip',
  models: [{ learnId: 5, type: 'keras', model: 'b'.repeat(64) }], built: '2026-01-01T00:00:00.000Z',
};
const record = (data: Partial<DeploymentBuilt['data']> = {}) => ({ type: 'RecordDeployment' as const, data: { ...build, ...data } });

describe('a project without builds', () => {
  it('records a build naming its artifact and models', () => spec.given([]).when(record()).then([{ type: 'DeploymentBuilt', data: build }]));
  it('refuses a record that could not be served: a bad hash, no model, a file name with a quote or slash', () => {
    spec.given([]).when(record({ artifact: 'xyz' })).thenThrows(ValidationError, /artifact must be a SHA-256/);
    spec.given([]).when(record({ models: [] })).thenThrows(ValidationError, /at least one trained model/);
    spec.given([]).when(record({ fileName: 'a"b.eim' })).thenThrows(ValidationError, /fileName/);
    spec.given([]).when(record({ fileName: '../b.eim' })).thenThrows(ValidationError, /fileName/);
    spec.given([]).when(record({ size: -1 })).thenThrows(ValidationError, /size/);
  });
});

describe('a project whose job already recorded its build', () => {
  it('records nothing when the retried job records it again', () => spec.given([{ type: 'DeploymentBuilt', data: build }]).when(record()).then([]));
  it('records the next job\'s build', () => spec.given([{ type: 'DeploymentBuilt', data: build }]).when(record({ jobId: 9, version: 5 })).then([{ type: 'DeploymentBuilt', data: { ...build, jobId: 9, version: 5 } }]));
});

describe('the buildable targets', () => {
  it('resolves the engine to the target\'s preferred one when none is named, and names the file after the project', () => {
    expect(resolveBuild('runner-linux-x86_64', undefined)).toMatchObject({ engine: 'tflite', suffix: 'linux-x86_64.eim' });
    expect(artifactFileName('Ma Détection / v2', 3, 'wasm.zip')).toBe('ma-detection-v2-v3-wasm.zip');
    expect(artifactFileName('🙂', 1, 'wasm.zip')).toBe('project-v1-wasm.zip');
  });
});
