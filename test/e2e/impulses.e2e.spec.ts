import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOn, setups, startTestService, type TestService } from '../support/testService';

// The official SDK's impulse and DSP namespaces, unmodified, pointed at the service, with an API key.
for (const setup of setups) {
  describeOn(setup, 'impulses through the official SDK', () => {
    let service: TestService;
    let api: EdgeImpulseApi;
    let projectId: number;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      api = new EdgeImpulseApi({ endpoint: service.apiUrl });
      await api.user.createUser({ name: 'Grace Hopper', username: 'grace', email: 'grace@example.com', password: 'cobol-for-ever', privacyPolicy: true, turnstileResponse: 'ok' });
      const login = await api.login.login({ username: 'grace', password: 'cobol-for-ever' });
      await api.authenticate({ method: 'jwtToken', jwtToken: login.token! });
      const created = await api.projects.createProject({ projectName: 'Keywords' });
      projectId = created.id;
      await api.authenticate({ method: 'apiKey', apiKey: created.apiKey });
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('builds an audio impulse from the catalog and block ids the service hands out', async () => {
      const blocks = await api.impulse.getImpulseBlocks(projectId);
      expect(blocks.dspBlocks.find((b) => b.type === 'mfcc')).toMatchObject({ latestImplementationVersion: 4, blockType: 'official' });
      const [input, dsp, learn] = [
        (await api.impulse.getNewBlockId(projectId)).blockId,
        (await api.impulse.getNewBlockId(projectId)).blockId,
        (await api.impulse.getNewBlockId(projectId)).blockId,
      ];
      expect(new Set([input, dsp, learn]).size).toBe(3);
      const created = await api.impulse.createImpulse(projectId, {
        name: 'Keywords',
        inputBlocks: [{ id: input, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['audio'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 16000 }],
        dspBlocks: [{ id: dsp, type: 'mfcc', name: 'MFCC', title: 'Audio (MFCC)', axes: ['audio'], input, implementationVersion: 4 }],
        learnBlocks: [{ id: learn, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [dsp] }],
      });
      const got = await api.impulse.getImpulse(projectId);
      expect(got.impulse).toMatchObject({ id: created.id, name: 'Keywords', dspBlocks: [{ id: dsp, type: 'mfcc' }] });
      const all = await api.impulse.getAllImpulses(projectId);
      expect(all.impulses.map((i) => i.id)).toEqual([created.id]);
      expect(all.maxImpulseCount).toBe(3);

      await api.dsp.setDspConfig(projectId, dsp, { config: { num_cepstral: '20' } });
      const config = await api.dsp.getDspConfig(projectId, dsp);
      expect(config.dsp).toMatchObject({ id: dsp, type: 'mfcc', windowLength: 1000, inputAxes: ['audio'] });
      const items = (config.config ?? []).flatMap((g) => g.items);
      expect(items.find((i) => i.param === 'num_cepstral')?.value).toBe('20');
      await expect(api.dsp.setDspConfig(projectId, dsp, { config: { num_cepstral: '40' } })).rejects.toThrow(/"num_cepstral": must be at most "num_filters"/);
      await api.dsp.clearDspBlock(projectId, dsp);

      await api.impulse.updateImpulse(projectId, { name: 'Renamed' }, { impulseId: created.id });
      const empty = await api.impulse.createNewEmptyImpulse(projectId, { type: 'default' });
      expect(empty.redirectUrl).toEqual(expect.any(String));
      await api.impulse.deleteImpulse(projectId, { impulseId: empty.id });
      expect((await api.impulse.getAllImpulses(projectId)).impulses.map((i) => i.name)).toEqual(['Renamed']);
    });
  });
}
