import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_TARGET_FORMATS, deploymentTargetCatalog, deploymentTargetsFor } from '../../domain/deployment/deploymentTargets';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import { whitelabelDecider, type WhitelabelCommand } from '../../domain/whitelabel/whitelabelDecider';
import type { WhitelabelSettings } from '../../domain/whitelabel/whitelabelEvents';
import { deciderSpecification } from '../support/deciderSpecification';
import { whitelabelSettings } from '../support/whitelabelSettings';

const spec = deciderSpecification(whitelabelDecider);
const now = new Date('2026-11-25T10:00:00.000Z');
const settings = whitelabelSettings();
const create = (overrides: Partial<WhitelabelSettings> = {}): WhitelabelCommand => ({ type: 'CreateWhitelabel', data: { whitelabelId: 5, settings: { ...settings, ...overrides }, now } });
const created = { type: 'WhitelabelCreated' as const, data: { whitelabelId: 5, settings, created: now.toISOString() } };
const update = (changes: Partial<WhitelabelSettings>): WhitelabelCommand => ({ type: 'UpdateWhitelabel', data: { changes, now } });

describe('a white label that does not exist yet', () => {
  it('is created with its name trimmed and its domain lowercased', () => {
    spec.given([]).when(create({ name: ' Acme ML ', domain: 'Studio.ACME.test' })).then([created]);
  });

  it('is refused a domain that is no host name', () => {
    for (const domain of ['localhost', 'https://studio.acme.test', 'studio acme.test', '-bad.acme.test', 'a..b']) {
      spec.given([]).when(create({ domain })).thenThrows(ValidationError, /"domain"/);
    }
  });

  it('is refused deployment targets and learn blocks that do not exist, naming them', () => {
    spec.given([]).when(create({ deploymentTargets: ['zip', 'toaster'] })).thenThrows(ValidationError, /unknown target format\(s\) "toaster"/);
    spec.given([]).when(create({ learningBlocks: ['keras', 'magic'] })).thenThrows(ValidationError, /unknown learn block type\(s\) "magic"/);
  });
});

describe('a white label', () => {
  it('records only the settings that change', () => {
    spec.given([created]).when(update({ deploymentTargets: ['wasm', 'wasm'], allowSignup: true, name: 'Acme ML' })).then([
      { type: 'WhitelabelUpdated', data: { whitelabelId: 5, changes: { deploymentTargets: ['wasm'] }, updated: now.toISOString() } },
    ]);
    spec.given([created]).when(update({ allowSignup: true })).then([]);
  });

  it('is refused an unknown target on update too', () => {
    spec.given([created]).when(update({ deploymentTargets: ['nope'] })).thenThrows(ValidationError, /"nope"/);
  });

  it('once deleted, takes no change and is not deleted again', () => {
    const deleted = { type: 'WhitelabelDeleted' as const, data: { whitelabelId: 5, deletedDate: now.toISOString() } };
    spec.given([created]).when({ type: 'DeleteWhitelabel', data: { now } }).then([deleted]);
    spec.given([created, deleted]).when({ type: 'DeleteWhitelabel', data: { now } }).thenThrows(NotFoundError);
    spec.given([created, deleted]).when(update({ name: 'Again' })).thenThrows(NotFoundError);
  });
});

describe('the deployment target catalog', () => {
  it('has the targets users expect, each with a unique format and the fields of the SDK', () => {
    const catalog = deploymentTargetCatalog();
    expect(new Set(DEPLOYMENT_TARGET_FORMATS).size).toBe(catalog.length);
    for (const format of ['zip', 'arduino', 'wasm', 'runner-linux-aarch64', 'runner-linux-x86_64', 'mobile-phone', 'docker', 'tensorrt']) expect(DEPLOYMENT_TARGET_FORMATS).toContain(format);
    for (const section of ['library', 'firmware', 'mobile']) expect(catalog.some((t) => t.uiSection === section), section).toBe(true);
    for (const t of catalog) {
      expect(t.supportedEngines).toContain(t.preferredEngine);
      expect(t.hasEonCompiler).toBe(t.supportedEngines.includes('tflite-eon'));
      expect(t.hasTensorRT).toBe(t.supportedEngines.includes('tensorrt'));
      expect(t.docsUrl).toMatch(/^https:\/\//);
      expect(t.modelVariants.some((v) => v.supported)).toBe(true);
    }
  });

  it("keeps a white label's targets, in catalog order, and all of them without one", () => {
    expect(deploymentTargetsFor({ deploymentTargets: ['wasm', 'zip', 'gone'] }).map((t) => t.format)).toEqual(['zip', 'wasm']);
    expect(deploymentTargetsFor(null)).toHaveLength(DEPLOYMENT_TARGET_FORMATS.length);
  });
});
