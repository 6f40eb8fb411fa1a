import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import { runJobCommand } from '../../commands/jobs/jobCommands';
import { withTestJobRunners } from '../support/testJobRunners';
import { registerUser, startTestService, type TestService } from '../support/testService';


// The official SDK's organizations, organizationJobs, whitelabels and deployment namespaces,
// unmodified, reading our answers. The first user is staff.
describe('the official SDK organization, white label and deployment namespaces against the service', () => {
  let service: TestService;
  let staff: EdgeImpulseApi;
  let ada: EdgeImpulseApi;
  let adaId: number;
  let organizationId: number;
  let organizationKey: string;
  let adaToken: string;
  let bob: { id: number; token: string };

  const sdk = async (auth: { method: 'jwtToken'; jwtToken: string } | { method: 'apiKey'; apiKey: string }) => {
    const api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    await api.authenticate(auth);
    return api;
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false, jobRunners: withTestJobRunners });
    staff = await sdk({ method: 'jwtToken', jwtToken: (await registerUser(service, 'staffer')).token });
    const user = await registerUser(service, 'ada');
    adaId = user.id;
    ada = await sdk({ method: 'jwtToken', jwtToken: user.token });
    bob = await registerUser(service, 'bob');
    adaToken = user.token;
  });
  /** The invitee's answer: the SDK has no call for it, so plain HTTP with their JWT. */
  const accept = async (invitationId: number, token: string) => {
    const res = await fetch(`${service.apiUrl}/v1/api/user/organization-invitations/${invitationId}/accept`, { method: 'POST', headers: { 'x-jwt-token': token } });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  afterAll(async () => {
    await service?.destroy();
  });

  it('creates an organization (staff), lists it, adds and manages members', async () => {
    const created = await staff.organizations.createOrganization({ organizationName: 'Analytical Engines' });
    organizationId = created.id;
    expect(created.apiKey).toMatch(/^ei_/);
    // Each answer is an invitation id; the invitee becomes a member by accepting it.
    await accept((await staff.organizations.addOrganizationMember(organizationId, { usernameOrEmail: 'ada@example.com', role: 'admin', datasets: [] })).id, adaToken);
    const invitation = await ada.organizations.addOrganizationMember(organizationId, { usernameOrEmail: 'bob', role: 'guest', datasets: ['wrists'] });
    expect(invitation.id).toEqual(expect.any(Number));
    await expect(ada.organizations.addOrganizationMember(organizationId, { usernameOrEmail: 'bob', role: 'member', datasets: [] })).rejects.toThrow(/already invited/);
    await accept(invitation.id, bob.token);
    await expect(ada.organizations.addOrganizationMember(organizationId, { usernameOrEmail: 'bob', role: 'member', datasets: [] })).rejects.toThrow(/already a member/);
    const added = { id: bob.id };
    await ada.organizations.setOrganizationMemberDatasets(organizationId, added.id, { datasets: ['wrists', 'ankles'] });
    await ada.organizations.setOrganizationMemberRole(organizationId, added.id, { role: 'member' });
    await ada.organizations.updateOrganization(organizationId, { name: 'Engines', readme: '# Engines' });
    const { organizations } = await ada.organizations.listOrganizations();
    expect(organizations).toEqual([expect.objectContaining({ id: organizationId, name: 'Engines', isDeveloperProfile: false })]);
    const info = await ada.organizations.getOrganizationInfo(organizationId);
    expect(info.organization.users.map((u) => [u.username, u.role, u.datasets])).toEqual([
      ['staffer', 'admin', []],
      ['ada', 'admin', []],
      ['bob', 'member', ['wrists', 'ankles']],
    ]);
    expect(info.organization.users[1]!.added).toBeInstanceOf(Date);
    const invited = await ada.organizations.inviteOrganizationMember(organizationId, { email: 'carol@example.com', role: 'guest', datasets: [] });
    expect(invited.success).toBe(true);
    await ada.organizations.removeOrganizationMember(organizationId, { id: added.id } as never);
    expect((await ada.organizations.getOrganizationInfo(organizationId)).organization.users.map((u) => u.username)).not.toContain('bob');
  });

  it('adds, lists (truncated) and revokes organization API keys, which then stop working', async () => {
    const { id, apiKey } = await ada.organizations.addOrganizationApiKey(organizationId, { name: 'CI', role: 'member', ttl: 3600 });
    organizationKey = apiKey;
    const { apiKeys } = await ada.organizations.listOrganizationApiKeys(organizationId);
    const listed = apiKeys.find((k) => k.id === id)!;
    expect(listed).toMatchObject({ name: 'CI', role: 'member', isTransformationJobKey: false });
    expect(listed.apiKey).not.toBe(apiKey);
    expect(listed.expires).toBeInstanceOf(Date);
    const byKey = await sdk({ method: 'apiKey', apiKey });
    expect((await byKey.organizations.listOrganizations()).organizations.map((o) => o.id)).toEqual([organizationId]);
    const doomed = await ada.organizations.addOrganizationApiKey(organizationId, { name: 'doomed', role: 'admin' });
    const doomedApi = await sdk({ method: 'apiKey', apiKey: doomed.apiKey });
    await doomedApi.organizations.getOrganizationInfo(organizationId);
    await ada.organizations.revokeOrganizationApiKey(organizationId, doomed.id);
    await expect(doomedApi.organizations.getOrganizationInfo(organizationId)).rejects.toThrow(/Invalid API key/);
  });

  it("follows an organization's job with runJobUntilCompletion and lists it with organizationJobs", async () => {
    const jobId = await new IdAllocator(service.stores.events).next('job');
    const { appended } = await runJobCommand(
      service.stores.events,
      {
        type: 'RequestJob',
        data: { jobId, projectId: null, organizationId, category: 'Organization job', categoryKey: 'test-lines', key: 'sdk', parameters: { lines: 3, delayMs: 200 }, jobNotificationUids: [], createdByUserId: adaId, now: new Date() },
      },
      { actor: `user:${adaId}`, correlationId: 'sdk', now: new Date() },
    );
    await service.projections!.waitFor(appended!.position, 5000);
    const byKey = await sdk({ method: 'apiKey', apiKey: organizationKey });
    const received: string[] = [];
    await byKey.runJobUntilCompletion({ type: 'organization', organizationId, jobId }, (data) => received.push(data));
    expect(received.join('')).toContain('line 3\n');
    const all = await byKey.organizationJobs.listAllOrganizationJobs(organizationId, { key: 'sdk', finished: 'successful' });
    expect(all).toMatchObject({ totalJobCount: 1, jobs: [expect.objectContaining({ id: jobId, category: 'Organization job', finishedSuccessful: true })] });
    expect((await byKey.organizationJobs.listActiveOrganizationJobs(organizationId)).jobs).toEqual([]);
    expect((await byKey.organizationJobs.listFinishedOrganizationJobs(organizationId)).jobs.map((j) => j.id)).toEqual([jobId]);
    const { stdout } = await byKey.organizationJobs.getOrganizationJobsLogs(organizationId, jobId);
    expect(stdout.map((l) => l.data)).toEqual(['line 1\n', 'line 2\n', 'line 3\n']);
    expect((await byKey.organizationJobs.getOrganizationJobStatus(organizationId, jobId)).job.finished).toBeInstanceOf(Date);
  }, 60_000);

  it('creates a white label (staff), reads its domain unauthenticated, narrows its targets and blocks', async () => {
    const { id } = await staff.whitelabels.createWhitelabel({ name: 'Engines Studio', domain: 'studio.engines.test', ownerOrganizationId: organizationId, learningBlocks: ['keras'] });
    const anonymous = new EdgeImpulseApi({ endpoint: service.apiUrl });
    expect((await anonymous.whitelabels.getWhitelabelDomain(id)).domain).toBe('studio.engines.test');
    await ada.whitelabels.updateDeploymentTargets(id, { targets: ['zip', 'wasm'] });
    await expect(ada.whitelabels.updateDeploymentTargets(id, { targets: ['zip', 'toaster'] })).rejects.toThrow(/toaster/);
    const { whitelabel } = await staff.whitelabels.getWhitelabel(id);
    expect(whitelabel).toMatchObject({ id, deploymentTargets: ['zip', 'wasm'], learningBlocks: ['keras'], ownerOrganizationId: organizationId });
    await staff.whitelabels.updateWhitelabel(id, { disableForumAccess: true });
    expect((await staff.whitelabels.getAllWhitelabels()).whitelabels.map((w) => [w.id, w.disableForumAccess])).toEqual([[id, true]]);
    const blocks = await ada.whitelabels.getAllImpulseBlocks(id);
    expect(blocks.learnBlocks.map((b) => b.type)).toEqual(['keras']);
    await staff.whitelabels.deleteWhitelabel(id);
    await expect(anonymous.whitelabels.getWhitelabelDomain(id)).rejects.toThrow(/not found/);
  });

  it('lists the deployment targets, for everyone and for a project', async () => {
    const { targets } = await ada.deployment.listAllDeploymentTargets();
    expect(targets.map((t) => t.format)).toEqual(expect.arrayContaining(['zip', 'arduino', 'wasm', 'runner-linux-aarch64', 'mobile-phone']));
    const projectId = (await ada.projects.createProject({ projectName: 'Deployable' })).id;
    const forProject = await ada.deployment.listDeploymentTargetsForProject(projectId);
    expect(forProject.targets.find((t) => t.format === 'zip')).toMatchObject({ name: 'C++ library', recommendedForProject: true, disabledForProject: false });
  });

  it('deletes the organization: its keys then answer "Invalid API key"', async () => {
    await ada.organizations.deleteOrganization(organizationId);
    const byKey = await sdk({ method: 'apiKey', apiKey: organizationKey });
    await expect(byKey.organizations.listOrganizations()).rejects.toThrow(/Invalid API key/);
  });
});
