import { describe, expect, it, vi } from 'vitest';
import type { OrganizationDocument } from '../../projections/organizations/organizationDocument';

// Counts the renders behind the organization's information, the real renderer doing the work.
const renders = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../projections/projects/readmeHtml', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../projections/projects/readmeHtml')>();
  return { readmeHtml: (markdown: string) => (renders.count++, actual.readmeHtml(markdown)) };
});
const { organizationInfoView } = await import('../../api/views/organizationView');
const { readmeHtml } = await import('../../projections/projects/readmeHtml');

const organization = (readme: string): OrganizationDocument => ({
  _id: 7, id: 7, name: 'Labs', isDeveloperProfile: false, ownerUserId: 1, members: [], memberIds: [], trialId: null,
  readme, showHeaderImgMask: false, experiments: [], created: '2026-01-01T00:00:00.000Z', deletedDate: null, _position: '1',
});
const context = { users: new Map(), staffUsernames: new Set<string>(), publicUrl: 'http://studio.test', audience: { kind: 'full' as const }, whitelabel: null, showInvitations: false };

describe("an organization's readme in its information", () => {
  it('is rendered once per text and kept, not at every GET of the organization', () => {
    const long = ('Some *text* with **bold** and [a link](https://example.com) and `code`.\n\n').repeat(1400).slice(0, 100_000);
    const before = renders.count;
    const first = organizationInfoView(organization(long), context).readme as { markdown: string; html: string };
    for (let i = 0; i < 5; i++) expect(organizationInfoView(organization(long), context).readme).toEqual(first);
    expect(renders.count - before).toBe(1);
    expect(first.markdown).toBe(long);
    expect(first.html).toBe(readmeHtml(long));
    // A changed readme is rendered anew, and answers its own HTML.
    const changed = organizationInfoView(organization('# Changed'), context).readme as { html: string };
    expect(changed.html).toContain('<h1>Changed</h1>');
    expect(renders.count - before).toBe(3);
  });
});
