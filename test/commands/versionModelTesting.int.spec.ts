// runModelTestingWhileVersioning: the version job runs model testing first, in the same job, and the
// version stands at the test's record, so it names that test's accuracy; a retried job tests once.
import { describe, expect, it } from 'vitest';
import { handleCommand } from '../../commands/handleCommand';
import type { JobRunner } from '../../commands/jobs/jobRunners';
import { systemContext } from '../../commands/commandContext';
import { versionJobRunner } from '../../commands/versions/versionJob';
import { modelTestingDecider } from '../../domain/learn/modelTestingDecider';
import { modelTestingStream } from '../../domain/learn/modelTestingEvents';
import type { VersionCreated } from '../../domain/version/versionEvents';
import { job, now, versionedSource } from '../support/versionedSource';

describe('a version made with model testing', () => {
  it('runs the test in its job, stands at the test\'s record with its accuracy, and tests once when retried', async () => {
    const { events, append, project, versionDeps } = await versionedSource();
    let runs = 0;
    // Stands in for the model testing runner: records the result as it does, under the job's id.
    const modelTesting: JobRunner = async (context) => {
      runs++;
      expect(context.parameters).toMatchObject({ impulseId: 5 });
      await handleCommand(events, modelTestingStream(10), modelTestingDecider, {
        type: 'RecordModelTest',
        data: { projectId: 10, impulseId: 5, jobId: context.jobId, results: 'e'.repeat(64), summary: { sampleCount: 1, skippedSampleCount: 0, windowCount: 4, accuracy: 0.75, balancedAccuracy: 0.75 }, tested: now.toISOString() },
      }, systemContext('classify', now));
      await project();
    };
    const parameters = { versionId: 71, description: 'tested', createdByUserId: null, runModelTesting: true, impulseId: 5 };
    await append('job-8', [{ type: 'JobRequested', data: { jobId: 8, projectId: 10 } }]);
    await project();
    await versionJobRunner({ ...versionDeps, modelTesting })(job(8, 10, parameters));
    await versionJobRunner({ ...versionDeps, modelTesting })(job(8, 10, parameters));

    expect(runs).toBe(1);
    const [tested] = await events.readStream(modelTestingStream(10));
    const versions = (await events.readStream('versions-10')).filter((e) => e.type === 'VersionCreated').map((e) => e.data as VersionCreated['data']);
    expect(versions.map((v) => v.versionId)).toEqual([70, 71]);
    expect(versions[1]).toMatchObject({ position: tested!.position.toString(), contents: { testAccuracy: 0.75 } });
    expect(versions[0]!.contents.testAccuracy).toBeNull();
    await events.close();
  });

  it('fails, recording nothing, on a worker that cannot run model testing', async () => {
    const { events, append, versionDeps } = await versionedSource();
    await append('job-9', [{ type: 'JobRequested', data: { jobId: 9, projectId: 10 } }]);
    await expect(versionJobRunner(versionDeps)(job(9, 10, { versionId: 72, description: '', createdByUserId: null, runModelTesting: true, impulseId: 5 }))).rejects.toThrow(/cannot run model testing/);
    expect((await events.readStream('versions-10')).filter((e) => e.type === 'VersionCreated')).toHaveLength(1);
    await events.close();
  });
});
