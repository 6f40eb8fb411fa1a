// A learn block's trained model as a file (LearnApi.downloadLearnModel). The model download ids:
// `tfjs` for a keras block, a zip of the TensorFlow.js layers model (model.json and
// model.weights.bin, what `tf.loadLayersModel` reads once unzipped into a folder or served) or
// `tflite-float32`, the same model as a float32 TensorFlow Lite file (domain/learn/tfliteExport.ts), and
// `anomaly-model` for an anomaly block, its K-means model as JSON (the scaling, the cluster centres
// and radii). 404 for a block that is not the project's, has no model, or another id.
import { zipArchive } from '../../commands/deployment/zipArchive';
import { readAllBytes } from '../../commands/dsp/generateFeatures';
import { fileSlug } from '../../domain/deployment/deploymentBuilds';
import { unpackKerasModel, WEIGHTS_FILE } from '../../domain/learn/kerasModelBlob';
import { kerasModelToTflite } from '../../domain/learn/tfliteExport';
import { NotFoundError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { intParam, operation, type Operation } from '../http/operation';

/** The download ids of each learn block type. */
export const MODEL_DOWNLOADS: Readonly<Record<string, readonly string[]>> = { keras: ['tfjs', 'tflite-float32'], anomaly: ['anomaly-model'] };

export function learnModelDownloadOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'downloadLearnModel',
      method: 'get',
      path: '/api/:projectId/learn-data/:learnId/model/:modelDownloadId',
      summary: "A learn block's trained model: tfjs (a keras block's TensorFlow.js model, zipped), tflite-float32 (the same as TensorFlow Lite) or anomaly-model (a K-means block's model, JSON)",
      auth: 'any',
      async handler({ ctx, params, project }) {
        const learnId = intParam(params, 'learnId');
        const downloadId = params.modelDownloadId ?? '';
        const block = (await deps.impulses.forProject(project.id)).flatMap((i) => i.learnBlocks).find((b) => b.id === learnId);
        if (!block) throw new NotFoundError(`No learn block ${learnId} in this project's impulses`, 'LEARN_BLOCK_NOT_FOUND');
        const expected = MODEL_DOWNLOADS[block.type];
        if (expected === undefined) throw new NotFoundError(`Learn block ${learnId} is of type ${block.type}: no model download for it`, 'MODEL_DOWNLOAD_NOT_FOUND');
        if (!expected.includes(downloadId)) throw new NotFoundError(`No model download "${downloadId.slice(0, 64)}" for learn block ${learnId}: its model is downloaded as ${expected.map((e) => `"${e}"`).join(' or ')}`, 'MODEL_DOWNLOAD_NOT_FOUND');
        const name = `${fileSlug(project.name)}-${fileSlug(block.name)}-${learnId}`;
        const untrained = () => new NotFoundError(`Learn block ${learnId} ("${block.name}") has no trained model: train it first`, 'NO_TRAINED_MODEL');
        if (block.type === 'keras') {
          const model = (await deps.kerasModels.byLearnBlock(project.id, learnId))?.model;
          if (!model) throw untrained();
          const files = unpackKerasModel(await readAllBytes(await deps.blobs.open(model.model)));
          if (downloadId === 'tflite-float32') {
            ctx.set('Content-Disposition', `attachment; filename="${name}-float32.tflite"`);
            ctx.state.fileBody = { type: 'application/octet-stream', body: Buffer.from(kerasModelToTflite(files)) };
            return {};
          }
          const zip = await zipArchive([
            { name: 'model.json', data: JSON.stringify(files.modelJson) },
            { name: WEIGHTS_FILE, data: files.weights },
          ]);
          ctx.set('Content-Disposition', `attachment; filename="${name}-tfjs.zip"`);
          ctx.state.fileBody = { type: 'application/zip', body: zip };
        } else {
          const model = (await deps.anomalyModels.byLearnBlock(project.id, learnId))?.model;
          if (!model) throw untrained();
          ctx.set('Content-Disposition', `attachment; filename="${name}-anomaly.json"`);
          ctx.state.fileBody = { type: 'application/json', body: await deps.blobs.open(model.model) };
        }
        return {};
      },
    }),
  ];
}
