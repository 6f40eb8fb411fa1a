// What a deployment of an impulse is built from: the trained model of each of its learn blocks. A
// build is refused, naming what is missing, when the impulse has no learn block, a block has no
// trained model, or a block is of a type this service cannot run on a device.
import type { DeployedModel } from '../../domain/deployment/deploymentEvents';
import { kerasModeOf } from '../../domain/learn/kerasRegression';
import { ValidationError } from '../../domain/shared/errors';
import type { AnomalyModelDocument } from '../../projections/anomalyModels/anomalyModelDocument';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { KerasModelDocument } from '../../projections/kerasModels/kerasModelDocument';

export interface DeployableModelsDeps {
  impulses: { byId(projectId: number, impulseId?: number): Promise<ImpulseDocument | null> };
  kerasModels: { byLearnBlock(projectId: number, learnId: number): Promise<KerasModelDocument | null> };
  anomalyModels: { byLearnBlock(projectId: number, learnId: number): Promise<AnomalyModelDocument | null> };
}

export async function deployableModels(deps: DeployableModelsDeps, projectId: number, impulseId: number | undefined): Promise<{ impulse: ImpulseDocument; models: DeployedModel[] }> {
  const impulse = await deps.impulses.byId(projectId, impulseId);
  if (!impulse) throw new ValidationError(impulseId === undefined ? 'The project has no impulse: create one, train it, then deploy' : `No impulse ${impulseId} in this project`, 'NO_IMPULSE');
  if (impulse.learnBlocks.length === 0) throw new ValidationError(`Impulse ${impulse.id} has no learn block: add one and train it, then deploy`, 'NO_TRAINED_MODEL');
  const models: DeployedModel[] = [];
  const untrained: string[] = [];
  for (const block of impulse.learnBlocks) {
    const label = `learn block ${block.id} ("${block.name}")`;
    // A keras-regression model is a keras model: the runtime answers it as { value } (its spec's mode).
    if (kerasModeOf(block.type) !== undefined) {
      const model = (await deps.kerasModels.byLearnBlock(projectId, block.id))?.model;
      if (model) models.push({ learnId: block.id, type: 'keras', model: model.model });
      else untrained.push(label);
    } else if (block.type === 'anomaly') {
      const model = (await deps.anomalyModels.byLearnBlock(projectId, block.id))?.model;
      if (model) models.push({ learnId: block.id, type: 'anomaly', model: model.model });
      else untrained.push(label);
    } else {
      throw new ValidationError(`${label[0]!.toUpperCase()}${label.slice(1)} is of type ${block.type}, which this service cannot deploy (keras, keras-regression and anomaly blocks only)`, 'UNSUPPORTED_LEARN_BLOCK');
    }
  }
  if (untrained.length > 0) throw new ValidationError(`No trained model for ${untrained.join(', ')}: train ${untrained.length === 1 ? 'it' : 'them'} first`, 'NO_TRAINED_MODEL');
  return { impulse, models };
}
