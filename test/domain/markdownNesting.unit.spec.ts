// A readme nests blocks by what starts its lines; the renderer descends once per level. Past a bound
// the readme is refused, and one stored before the bound renders as plain text, never a crash.
import { describe, expect, it } from 'vitest';
import { organizationDecider } from '../../domain/organization/organizationDecider';
import { checkSettingsChange } from '../../domain/project/projectSettings';
import { MARKDOWN_PREFIX_MAX, tooDeeplyNestedLine } from '../../domain/shared/markdownNesting';
import { ValidationError } from '../../domain/shared/errors';
import { readmeHtml } from '../../projections/projects/readmeHtml';

const quotes = (n: number) => `${'> '.repeat(n)}deep`;
const lists = (n: number) => Array.from({ length: n }, (_, i) => `${'  '.repeat(i)}- item`).join('\n');
const oneLineLists = (n: number) => `${'- '.repeat(n)}x`;

describe('the nesting of a readme', () => {
  it('is measured by the widest block prefix of any line, tabs counting four', () => {
    expect(tooDeeplyNestedLine('# Title\n\nSome text\n> quoted\n- a\n  - b')).toBeNull();
    expect(tooDeeplyNestedLine(quotes(MARKDOWN_PREFIX_MAX / 2))).toBeNull();
    expect(tooDeeplyNestedLine(`intro\n${quotes(MARKDOWN_PREFIX_MAX / 2 + 1)}`)).toBe(2);
    // Line i (from 0) starts with 2i spaces and "- ": the first past 64 characters is line 33.
    expect(tooDeeplyNestedLine(lists(200))).toBe(MARKDOWN_PREFIX_MAX / 2 + 1);
    expect(tooDeeplyNestedLine(oneLineLists(1000))).toBe(1);
    expect(tooDeeplyNestedLine(`${'\t'.repeat(17)}x`)).toBe(1);
    expect(tooDeeplyNestedLine('')).toBeNull();
  });

  it("is refused past the bound in a project's and an organization's readme, naming the line", () => {
    expect(() => checkSettingsChange({ readme: quotes(2000) }, [])).toThrow(ValidationError);
    expect(() => checkSettingsChange({ readme: lists(100) }, [])).toThrow(/"readme": line 33 nests too deeply/);
    expect(checkSettingsChange({ readme: lists(20) }, []).readme).toBe(lists(20));
    const created = organizationDecider.decide(
      { type: 'CreateOrganization', data: { organizationId: 1, name: 'Acme', isDeveloperProfile: false, ownerUserId: 1, trialId: null, now: new Date('2026-01-01T00:00:00Z') } },
      organizationDecider.initialState(),
    );
    const state = created.reduce(organizationDecider.evolve, organizationDecider.initialState());
    expect(() => organizationDecider.decide({ type: 'UpdateOrganization', data: { changes: { readme: quotes(2000) }, now: new Date('2026-01-02T00:00:00Z') } }, state)).toThrow(/nests too deeply/);
  });

  it('renders a readme stored before the bound as plain text, where the renderer overflowed its stack', () => {
    expect(readmeHtml(quotes(5000))).toBe(`<pre>${'&gt; '.repeat(5000)}deep</pre>`);
    expect(readmeHtml(oneLineLists(5000))).toBe(`<pre>${'- '.repeat(5000)}x</pre>`);
    expect(readmeHtml('<script>alert(1)</script>\n' + quotes(100))).not.toContain('<script>');
    expect(readmeHtml(lists(5))).toContain('<ul>');
  });
});
