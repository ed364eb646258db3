/**
 * Where `npm run bench` writes its report: a run of chosen scenarios must not write over
 * docs/benchmarks.md, whose other sections it does not hold.
 */
import { isAbsolute, join } from 'node:path';

import { resolveOut } from '../../packages/bench/src';

const ROOT = join(__dirname, '..', '..');

describe('the bench report path', () => {
    test('a run of the default scenarios writes docs/benchmarks.md', () => {
        expect(resolveOut(undefined)).toBe(join(ROOT, 'docs', 'benchmarks.md'));
    });

    test('a run of chosen scenarios writes a file of its own, outside docs/', () => {
        expect(resolveOut(undefined, ['B7'])).toBe(join(ROOT, 'bench-results', 'benchmarks-B7.md'));
        expect(resolveOut(undefined, ['B1', 'B5'])).toBe(join(ROOT, 'bench-results', 'benchmarks-B1-B5.md'));
    });

    test('--out wins, relative to the repo root', () => {
        expect(resolveOut('x/report.md', ['B7'])).toBe(join(ROOT, 'x', 'report.md'));
        expect(isAbsolute(resolveOut('/tmp/r.md'))).toBe(true);
    });
});
