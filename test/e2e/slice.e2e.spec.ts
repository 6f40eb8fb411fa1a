import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOn, setups, startTestService, type TestService } from '../support/testService';

// The official SDK, unmodified, pointed at the service.
for (const setup of setups) {
  describeOn(setup, 'the official SDK against the service', () => {
    let service: TestService;
    let api: EdgeImpulseApi;
    let token: string;
    let projectId: number;
    let apiKey: string;

    beforeAll(async () => {
      service = await startTestService({ mongo: setup.mongo });
      api = new EdgeImpulseApi({ endpoint: service.apiUrl });
    });
    afterAll(async () => {
      await service?.destroy();
    });

    it('signs up and logs in', async () => {
      const created = await api.user.createUser({
        name: 'Grace Hopper',
        username: 'grace',
        email: 'grace@example.com',
        password: 'cobol-for-ever',
        privacyPolicy: true,
        turnstileResponse: 'ok',
        projectName: 'Compilers',
      });
      expect(created.success).toBe(true);
      expect(created.id).toEqual(expect.any(Number));
      const login = await api.login.login({ username: 'grace', password: 'cobol-for-ever' });
      expect(login.token).toEqual(expect.any(String));
      token = login.token!;
    });

    it('surfaces the login error as the SDK\'s thrown message', async () => {
      await expect(api.login.login({ username: 'grace', password: 'wrong' })).rejects.toThrow('Invalid username or password');
    });

    it('reads the current user and their projects with a JWT', async () => {
      await api.authenticate({ method: 'jwtToken', jwtToken: token });
      const user = await api.user.getCurrentUser();
      expect(user).toMatchObject({ success: true, username: 'grace', name: 'Grace Hopper', email: 'grace@example.com', tier: 'free' });
      expect(user.created).toBeInstanceOf(Date);
      expect(user.projects.map((p) => p.name)).toEqual(['Compilers']);
      const projects = await api.user.getCurrentUserProjects();
      expect(projects.projects.map((p) => p.name)).toEqual(['Compilers']);
    });

    it('creates a project and reads its information, with the development keys', async () => {
      const created = await api.projects.createProject({ projectName: 'Keyword spotting' });
      expect(created.apiKey).toMatch(/^ei_/);
      projectId = created.id;
      apiKey = created.apiKey;
      const list = await api.projects.listProjects();
      expect(list.projects.map((p) => p.name)).toEqual(['Keyword spotting', 'Compilers']);
      const info = await api.projects.getProjectInfo(projectId);
      expect(info.project).toMatchObject({ id: projectId, name: 'Keyword spotting', owner: 'Grace Hopper' });
      expect(info.project.created).toBeInstanceOf(Date);
      expect(info.project.collaborators).toEqual([expect.objectContaining({ username: 'grace', isOwner: true })]);
      expect(info.developmentKeys).toEqual({ apiKey, hmacKey: expect.any(String) });
      const devkeys = await api.projects.listDevkeys(projectId);
      expect(devkeys.apiKey).toBe(apiKey);
    });

    it('reads the project with its API key, where the development keys are undefined', async () => {
      const withKey = new EdgeImpulseApi({ endpoint: `${service.apiUrl}/v1/` });
      await withKey.authenticate({ method: 'apiKey', apiKey });
      const info = await withKey.projects.getProjectInfo(projectId);
      expect(info.project.name).toBe('Keyword spotting');
      expect(info.developmentKeys.apiKey).toBeUndefined();
      expect(info.developmentKeys.hmacKey).toBeUndefined();
      const list = await withKey.projects.listProjects();
      expect(list.projects.map((p) => p.id)).toEqual([projectId]);
      const devkeys = await withKey.projects.listDevkeys(projectId);
      expect(devkeys.apiKey).toBeUndefined();
      await expect(withKey.user.getCurrentUser()).rejects.toThrow(/needs a JWT token/);
    });

    it('keeps an API key out of other projects', async () => {
      const other = (await api.user.getCurrentUserProjects()).projects.find((p) => p.name === 'Compilers')!;
      const withKey = new EdgeImpulseApi({ endpoint: service.apiUrl });
      await withKey.authenticate({ method: 'apiKey', apiKey });
      await expect(withKey.projects.getProjectInfo(other.id)).rejects.toThrow(`This API key does not give access to project ${other.id}`);
    });

    it('still logs in and sees the same project after the service restarts', async () => {
      const before = await api.projects.getProjectInfo(projectId);
      service = await service.restart();
      const again = new EdgeImpulseApi({ endpoint: service.apiUrl });
      const login = await again.login.login({ username: 'grace@example.com', password: 'cobol-for-ever' });
      await again.authenticate({ method: 'jwtToken', jwtToken: login.token! });
      const after = await again.projects.getProjectInfo(projectId);
      // Logging in again moves lastSeen; everything else is the same.
      const stable = (project: typeof before.project) => ({ ...project, collaborators: project.collaborators.map(({ lastSeen: _lastSeen, ...c }) => c) });
      expect(stable(after.project)).toEqual(stable(before.project));
      expect(after.developmentKeys).toEqual(before.developmentKeys);
    });
  });
}
