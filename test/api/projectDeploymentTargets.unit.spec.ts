import { describe, expect, it } from 'vitest';
import { projectDeploymentTargets } from '../../api/routes/deploymentRoutes';
import { deploymentTargetCatalog } from '../../domain/deployment/deploymentTargets';
import type { ProjectDocument } from '../../projections/projects/projectDocument';

const project = (settings: ProjectDocument['settings']) => ({ settings }) as ProjectDocument;
const recommended = (settings: ProjectDocument['settings']) =>
  projectDeploymentTargets(deploymentTargetCatalog(), project(settings))
    .filter((t) => t.recommendedForProject)
    .map((t) => t.format);

describe("a project's deployment targets", () => {
  it('recommend the C++ library when the project names no latency device', () => {
    expect(recommended({})).toEqual(['zip']);
  });

  it("recommend the targets of the project's latency device, from its settings or its target constraints", () => {
    expect(recommended({ latencyDevice: 'rpi4' })).toEqual(['runner-linux-aarch64', 'runner-linux-armv7']);
    expect(recommended({ targetConstraints: { targetDevices: [{ latencyDevice: 'akd1000' }], applicationBudgets: [] } })).toEqual(['brainchip-akida']);
  });

  it('fall back to the C++ library when no target has that device, and disable none', () => {
    const targets = projectDeploymentTargets(deploymentTargetCatalog(), project({ latencyDevice: 'some-unknown-mcu' }));
    expect(targets.filter((t) => t.recommendedForProject).map((t) => t.format)).toEqual(['zip']);
    expect(targets.every((t) => t.disabledForProject === false)).toBe(true);
  });
});
