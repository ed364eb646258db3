import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { z } from 'zod';

import type { ScopeSettings, ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import type { scopeSchema } from '../../packages/throttling/src/options/options-schema';
import { throttlingOptionsSchema } from '../../packages/throttling/src/options/options-schema';

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
