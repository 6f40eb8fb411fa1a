import { EdgeImpulseApi } from 'edge-impulse-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedSample } from '../support/signedSample';
import { sdkProject } from '../support/projectWithFeatures';
import type { TestService } from '../support/testService';
import { readModelsCaughtUp } from '../support/readModels';

// The official SDK's devices namespace, unmodified, pointed at the service.
describe('the official SDK devices namespace against the service', () => {
  let service: TestService;
  let api: EdgeImpulseApi;
  let projectId: number;
  let apiKey: string;
  let hmacKey: string;

  beforeAll(async () => {
    ({ service, api, projectId, apiKey } = await sdkProject('Devices'));
    hmacKey = (await api.projects.listDevkeys(projectId)).hmacKey!;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  it('registers and names a device the way the Linux CLI does on connect (create if not exists, get, rename)', async () => {
    const deviceId = 'e4:5f:01:aa:bb:cc';
    await api.devices.createDevice(projectId, { deviceId, deviceType: 'RASPBERRY_PI', ifNotExists: true });
    const { device } = await api.devices.getDevice(projectId, deviceId);
    expect(device).toMatchObject({ deviceId, name: deviceId, deviceType: 'RASPBERRY_PI', remote_mgmt_connected: false, remoteMgmtMode: 'disconnected', sensors: [] });
    expect(device!.created).toBeInstanceOf(Date);
    expect(device!.lastSeen).toBeInstanceOf(Date);
    await api.devices.renameDevice(projectId, deviceId, { name: 'Pi in the lab' });
    // Connecting again: the device exists, so nothing changes and the name stays.
    await api.devices.createDevice(projectId, { deviceId, deviceType: 'RASPBERRY_PI', ifNotExists: true });
    expect((await api.devices.getDevice(projectId, deviceId)).device!.name).toBe('Pi in the lab');
    const info = await api.projects.getProjectInfo(projectId);
    expect(info.devices).toEqual([expect.objectContaining({ deviceId, name: 'Pi in the lab' })]);
  });

  it('surfaces a conflict and an unknown device as thrown errors', async () => {
    await expect(api.devices.createDevice(projectId, { deviceId: 'e4:5f:01:aa:bb:cc', deviceType: 'RASPBERRY_PI', ifNotExists: false })).rejects.toThrow(/already exists/);
    await expect(api.devices.getDevice(projectId, 'unknown')).rejects.toThrow(/not found/);
    await expect(api.devices.renameDevice(projectId, 'unknown', { name: 'x' })).rejects.toThrow(/not found/);
  });

  it('lists a device seen in data, deletes it, and sees it again after its next upload', async () => {
    const upload = async (fileName: string) => {
      const res = await fetch(`${service.ingestionUrl}/api/training/data`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-file-name': fileName },
        body: signedSample(hmacKey, [[1, 2], [3, 4]], { deviceName: 'field-unit' }),
      });
      expect(res.status).toBe(200);
      // Ingestion answers on durability: the device read model is waited for before it is read.
      await readModelsCaughtUp(service);
    };
    await upload('a.json');
    const listed = (await api.devices.listDevices(projectId)).devices;
    expect(listed.map((d) => d.deviceId).sort()).toEqual(['e4:5f:01:aa:bb:cc', 'field-unit']);
    expect(listed.find((d) => d.deviceId === 'field-unit')!.lastSeen).toBeInstanceOf(Date);
    await api.devices.deleteDevice(projectId, 'field-unit');
    expect((await api.devices.listDevices(projectId)).devices.map((d) => d.deviceId)).toEqual(['e4:5f:01:aa:bb:cc']);
    await upload('b.json');
    expect((await api.devices.getDevice(projectId, 'field-unit')).device).toMatchObject({ deviceId: 'field-unit', deviceType: 'LINUX_TEST' });
  });
});
