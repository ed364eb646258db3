import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runBenchmarks } from '../../packages/bench/src';
import { describeLimiter } from '../helpers/real-limiters';

describeLimiter(['nginx-limit-req', 'haproxy'], 'benchmark B5 (smoke: two quick mixes with real limiters)', () => {
    let dir: string;
    beforeAll(() => {
        dir = mkdtempSync(join(tmpdir(), 'bench-b5-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('runs every contender on each mix and writes the summary, per-kind and per-mix tables', async () => {
        const out = join(dir, 'benchmarks.md');
        const results = await runBenchmarks({
            quick: true,
            only: ['B5'],
            mixes: { firstSeed: 2000, count: 2 },
            out,
            progress: () => undefined,
        });
        const b5 = results.b5!;
        expect(b5.map((r) => r.mix.seed)).toEqual([2000, 2001]);
        for (const { mix, runs } of b5) {
            expect(runs.map((r) => r.contender).sort()).toEqual(['oracle', 'plain', 'sameDomainDelay', 'throttler']);
            // Every run is scored on every site of the mix, real limiters included, from the web's log.
            for (const run of runs) {
                expect(run.pagesTotal).toBe(mix.pages * mix.sites.length);
                expect(run.sites.map((s) => s.host)).toEqual(mix.sites.map((s) => s.host));
                expect(run.requests).toBeGreaterThanOrEqual(run.pagesCompleted);
                expect(run.pagesCompleted).toBeGreaterThan(0);
            }
            expect(mix.sites.some((s) => s.limiter)).toBe(true);
        }
        const md = readFileSync(out, 'utf8');
        expect(md).toContain('## B5 — a family of unknown sites and real limiters');
        expect(md).toMatch(/\| \(c\) oracle: told each limit, `rampup: false` \| [\d.]+ % \| [\d.]+ % \|/);
        expect(md).toMatch(/\| haproxy \| \(d\) \| \d+ \|/);
        expect(md).toMatch(/\| 2001 \| short, \d+ × 8 \|/);
        expect(md).toContain('--mixes 2000,2');
    }, 180_000);
});
