import { lookup } from 'node:dns';
import { EdgeImpulseApi } from 'edge-impulse-api';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_TARGET_FORMATS } from '../../domain/deployment/deploymentTargets';
import { registerUser, startTestService, type TestService } from '../support/testService';

const DOMAIN = 'studio.acme.test';

// The official SDK, unmodified, reaching the service at a white label's domain as a browser or a
// script on that brand would: fetch's connections to the domain are sent to the local service (no
// DNS entry needed), so the Host header is the white label's domain. The first user is staff.
describe("the official SDK on a white label's domain", () => {
  let service: TestService;
  let previous: Dispatcher;
  let staff: EdgeImpulseApi;
  let adaOnMain: EdgeImpulseApi;
  let adaOnLabel: EdgeImpulseApi;
  let organizationId: number;
  let whitelabelId: number;

  const sdk = async (endpoint: string, jwtToken: string) => {
    const api = new EdgeImpulseApi({ endpoint });
    await api.authenticate({ method: 'jwtToken', jwtToken });
    return api;
  };

  beforeAll(async () => {
    previous = getGlobalDispatcher();
    setGlobalDispatcher(
      new Agent({
        connect: {
          lookup: (hostname, options, callback) => lookup(hostname === DOMAIN ? '127.0.0.1' : hostname, options, callback),
        },
      }),
    );
    service = await startTestService({ mongo: false });
    const labelUrl = new URL(service.apiUrl);
    labelUrl.hostname = DOMAIN;
    staff = await sdk(service.apiUrl, (await registerUser(service, 'staffer')).token);
    const ada = await registerUser(service, 'ada');
    adaOnMain = await sdk(service.apiUrl, ada.token);
    adaOnLabel = await sdk(labelUrl.origin, ada.token);
    organizationId = (await adaOnMain.user.startEnterpriseTrial({ organizationName: 'Acme' })).id;
    whitelabelId = (await staff.whitelabels.createWhitelabel({ name: 'Acme ML', domain: DOMAIN, ownerOrganizationId: organizationId, deploymentTargets: ['zip', 'wasm'], allowFreeProjects: false })).id;
  });
  afterAll(async () => {
    await service?.destroy();
    setGlobalDispatcher(previous);
  });

  it('refuses a free project on the domain, naming the switch', async () => {
    await expect(adaOnLabel.projects.createProject({ projectName: 'Free' })).rejects.toThrow(/allowFreeProjects is false/);
  });

  it("makes the organization's project on the domain in the white label, which answers its whitelabelId and sees only its targets", async () => {
    const { id } = await adaOnLabel.organizationCreateProject.organizationCreateEmptyProject(organizationId, { projectName: 'Fleet' });
    for (const api of [adaOnLabel, adaOnMain]) {
      const { project } = await api.projects.getProjectInfo(id);
      expect(project).toMatchObject({ id, whitelabelId, whitelabelName: 'Acme ML', ownerOrganizationId: organizationId });
      const { targets } = await api.deployment.listDeploymentTargetsForProject(id);
      expect(targets.map((t) => t.format).sort()).toEqual(['wasm', 'zip']);
    }
    const me = await adaOnMain.user.getCurrentUser();
    expect(me.organizations.find((o) => o.id === organizationId)).toMatchObject({ whitelabelId });
    expect(me.projects.find((p) => p.id === id)).toMatchObject({ whitelabelId, whitelabelName: 'Acme ML' });
  });

  it('makes a personal project on the main host in no white label, with every target', async () => {
    const { id } = await adaOnMain.projects.createProject({ projectName: 'Personal' });
    const { project } = await adaOnMain.projects.getProjectInfo(id);
    expect(project.whitelabelId).toBeNull();
    const { targets } = await adaOnMain.deployment.listDeploymentTargetsForProject(id);
    expect(targets.map((t) => t.format).sort()).toEqual([...DEPLOYMENT_TARGET_FORMATS].sort());
  });
});
