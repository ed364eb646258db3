import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

// The published package: built to dist/ (npm test builds first), usable from require and import.
const pkg = join(__dirname, '../../packages/throttling');

describe('crawlee-throttling as published', () => {
    beforeAll(() => {
        if (!existsSync(join(pkg, 'dist/index.js')))
            throw new Error('packages/throttling is not built: run `npm run build` (npm test does)');
    });

    test('require() finds the public API and its type declarations exist', () => {
        const out = execFileSync(
            process.execPath,
            [
                '-e',
                `const m = require(${JSON.stringify(pkg)}); console.log(typeof m.ThrottlingRequestManager, typeof m.PersistentRateLimitError, typeof m.seededRandom)`,
            ],
            {
                encoding: 'utf8',
            },
        );
        expect(out.trim()).toBe('function function function');
        expect(existsSync(join(pkg, 'dist/index.d.ts'))).toBe(true);
    });

    test('import finds the same API through the ESM entry', () => {
        const entry = join(pkg, 'dist/index.mjs');
        const out = execFileSync(
            process.execPath,
            [
                '--input-type=module',
                '-e',
                `import { ThrottlingRequestManager, ManualClock } from ${JSON.stringify(entry)}; console.log(typeof ThrottlingRequestManager, typeof ManualClock)`,
            ],
            { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
        );
        expect(out.trim()).toBe('function function');
    });
});
