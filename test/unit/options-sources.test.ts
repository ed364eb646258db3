import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { z } from 'zod';

import type { ScopeSettings, ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import type { scopeSchema } from '../../packages/throttling/src/options/options-schema';
import { throttlingOptionsSchema } from '../../packages/throttling/src/options/options-schema';
import { DEFAULTS } from '../../packages/throttling/src/options/defaults';

// The options are written in three places: the JSDoc'd interfaces (what users' editors show), the
// zod schemas (what is validated) and docs/options.md (the reference). These checks fail when one of
// them names an option the others do not.

type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;

// Checked by `npm run typecheck`: an option added to an interface but not to its schema (or the
// other way round) makes one of these `false`, and the assignment fails to compile.
const managerKeysAgree: SameKeys<ThrottlingRequestManagerOptions, z.input<typeof throttlingOptionsSchema>> = true;
const scopeKeysAgree: SameKeys<ScopeSettings, z.input<typeof scopeSchema>> = true;

/** Option names of the reference tables: the first cell of each row, up to the Validation section. */
function documentedOptions(): Set<string> {
    const page = readFileSync(join(__dirname, '../../docs/options.md'), 'utf8');
    const reference = page.slice(0, page.indexOf('\n## Validation'));
    const names = [...reference.matchAll(/^\| `([A-Za-z]+)`/gm)].map((m) => m[1]!);
    return new Set(names);
}

describe('the options are described alike in the interface, the schema and docs/options.md', () => {
    test('the interfaces and the schemas have the same keys (a compile-time check)', () => {
        expect([managerKeysAgree, scopeKeysAgree]).toEqual([true, true]);
    });

    test('every option the schema accepts has a row in docs/options.md, and every row is an option', () => {
        const schemaKeys = new Set(Object.keys(throttlingOptionsSchema.shape));
        const documented = documentedOptions();
        expect([...schemaKeys].filter((k) => !documented.has(k)).sort()).toEqual([]);
        expect([...documented].filter((k) => !schemaKeys.has(k)).sort()).toEqual([]);
    });
});

/** The default column of each option's row in docs/options.md (the first table row naming it). */
function documentedDefaults(): Map<string, string> {
    const page = readFileSync(join(__dirname, '../../docs/options.md'), 'utf8');
    const rows = [...page.matchAll(/^\| `([A-Za-z]+)` \| (?:[^|\\]|\\.)* \| ((?:[^|\\]|\\.)*) \|/gm)];
    const out = new Map<string, string>();
    for (const [, name, cell] of rows) if (!out.has(name!)) out.set(name!, cell!);
    return out;
}

/** The `@default` tag of each option in the JSDoc'd interfaces. */
function jsdocDefaults(): Map<string, string> {
    const out = new Map<string, string>();
    for (const file of ['options.ts', 'scope-settings.ts']) {
        const source = readFileSync(join(__dirname, '../../packages/throttling/src/options', file), 'utf8');
        for (const m of source.matchAll(/@default ([^\n]*)\n\s*\*\/\n\s*([A-Za-z]+)\?:/g)) out.set(m[2]!, m[1]!);
    }
    return out;
}

/** How a default is written in the docs and in JSDoc: `2`, `'hostname'`, `true`, `[429, 502]`. */
function written(value: unknown): string {
    if (typeof value === 'string') return `'${value}'`;
    if (Array.isArray(value)) return `[${value.join(', ')}]`;
    return String(value);
}

describe('every default is written once, in DEFAULTS, and the docs and JSDoc agree with it', () => {
    const schemaKeys = new Set([...Object.keys(throttlingOptionsSchema.shape)]);
    const scalarDefaults = Object.entries(DEFAULTS).filter(
        ([name, value]) => schemaKeys.has(name) && (typeof value !== 'object' || Array.isArray(value)),
    );

    test('the table covers the options it should', () => {
        expect(scalarDefaults.length).toBeGreaterThanOrEqual(25);
    });

    test.each(scalarDefaults)('`%s`: docs/options.md shows the default', (name, value) => {
        expect(documentedDefaults().get(name)).toContain(`\`${written(value)}\``);
    });

    test.each(scalarDefaults)('`%s`: the JSDoc @default shows the default', (name, value) => {
        const tag = jsdocDefaults().get(name);
        if (tag === undefined) return expect(name).toMatch(/^(frontierWindow|frontierWindowPerDomain)$/);
        expect(tag.replace(/(\d)_(\d)/g, '$1$2')).toContain(written(value));
    });
});
