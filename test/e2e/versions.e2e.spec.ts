import { describe, expect, it } from 'vitest';
import { sdkProjectForSuite, sineRows } from '../support/projectWithFeatures';

// The official SDK, unmodified: version a project with JobsApi.startVersionJob (followed to its end
// with runJobUntilCompletion), list with ProjectsApi.listVersions, describe with updateVersion and
// delete with deleteVersion; what a version recorded stays while the project changes.
describe('versions through the official SDK', () => {
  const project = sdkProjectForSuite('Versions through the SDK');

  const version = async (description: string): Promise<string> => {
    const { api, projectId } = project();
    const { id: jobId } = await api.jobs.startVersionJob(projectId, { description, makePublic: false });
    const output: string[] = [];
    await api.runJobUntilCompletion({ type: 'project', projectId, jobId }, (line) => output.push(line));
    return output.join('');
  };
  /** The job ends when its version is recorded; the read model may take a moment more. */
  const versionsUntil = async (count: number) => {
    const { api, projectId } = project();
    for (let i = 0; ; i++) {
      const list = await api.projects.listVersions(projectId);
      if (list.versions.length === count || i === 50) return list;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('versions the project as a job, lists it with its number, author and sample count, and numbers the next one after it', async () => {
    const { api, projectId, ingest } = project();
    await ingest('training', 'idle', sineRows(1, 200));
    await ingest('training', 'wave', sineRows(7, 200));
    expect(await version('two samples')).toMatch(/2 samples \(2 files\)/);
    const list = await versionsUntil(1);
    expect(list).toMatchObject({ success: true, nextVersion: 2, runModelTestingWhileVersioning: false });
    expect(list.versions[0]).toMatchObject({ version: 1, description: 'two samples', userName: 'Ada Lovelace', totalSamplesCount: '2' });
    expect(list.versions[0]!.created).toBeInstanceOf(Date);

    // The version stands where it was made: a deleted sample leaves it as it is; the next version sees one sample.
    const { samples } = await api.rawData.listSamples(projectId, { category: 'training' });
    await api.rawData.deleteSample(projectId, samples.find((s) => s.label === 'wave')!.id);
    await version('one sample');
    const after = await versionsUntil(2);
    expect(after.nextVersion).toBe(3);
    expect(after.versions.map((v) => [v.version, v.description, v.totalSamplesCount])).toEqual([[2, 'one sample', '1'], [1, 'two samples', '2']]);
  });

  it('changes a version\'s description and deletes a version, whose number is not given again', async () => {
    const { api, projectId } = project();
    const [latest] = (await versionsUntil(2)).versions;
    await api.projects.updateVersion(projectId, latest!.id, { description: 'one sample, renamed' });
    expect((await api.projects.listVersions(projectId)).versions[0]).toMatchObject({ id: latest!.id, description: 'one sample, renamed' });
    await api.projects.deleteVersion(projectId, latest!.id);
    const list = await api.projects.listVersions(projectId);
    expect(list.versions.map((v) => v.version)).toEqual([1]);
    expect(list.nextVersion).toBe(3);
  });

  it('answers bad input with a clear error and changes nothing', async () => {
    const { api, projectId } = project();
    const before = await api.projects.listVersions(projectId);
    await expect(api.projects.updateVersion(projectId, 999_999, { description: 'x' })).rejects.toThrow(/Version 999999 does not exist/);
    await expect(api.projects.deleteVersion(projectId, 999_999)).rejects.toThrow(/Version 999999 does not exist/);
    expect(before.versions).toHaveLength(1);
    await expect(api.projects.updateVersion(projectId, before.versions[0]!.id, { description: 'a\u0000b' })).rejects.toThrow(/description/);
    await expect(api.jobs.startVersionJob(projectId, { description: 'x', makePublic: true })).rejects.toThrow(/makePublic false/);
    await expect(api.jobs.startVersionJob(projectId, { description: 'x'.repeat(5000), makePublic: false })).rejects.toThrow(/description/);
    // Model testing needs a trained impulse (restore.e2e.spec.ts versions a trained project with it).
    await expect(api.jobs.startVersionJob(projectId, { description: 'x', makePublic: false, runModelTestingWhileVersioning: true })).rejects.toThrow(/runModelTestingWhileVersioning: .*impulse/);
    expect(await api.projects.listVersions(projectId)).toEqual(before);
  });
});
