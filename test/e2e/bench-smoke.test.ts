import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runBenchmarks } from '../../packages/bench/src';

describe('benchmarks (smoke, quick mode)', () => {
    let dir: string;
    beforeAll(() => {
        dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('runs B1–B4 and B6 at tiny sizes and writes their markdown tables', async () => {
        const out = join(dir, 'benchmarks.md');
        const lines: string[] = [];
        // B5 starts real limiters (nginx, haproxy); limiter-bench-b5.test.ts runs it.
        const only = ['B1', 'B2', 'B3', 'B4', 'B6'] as const;
        const results = await runBenchmarks({ quick: true, only, out, progress: (line) => lines.push(line) });

        expect(results.outPath).toBe(out);
        expect(existsSync(out)).toBe(true);
        const md = readFileSync(out, 'utf8');
        expect(md).toBe(results.markdown);

        // Header with the machine.
        expect(md).toContain(`| node | ${process.version} |`);
        expect(md).toMatch(/\| CPU \| .+ × \d+ cores \|/);

        // One section and one table per scenario.
        const sections = ['## B1', '## B2', '## B3', '## B4', '## B6'].map((h) => md.indexOf(h));
        expect(sections.every((i) => i >= 0)).toBe(true);
        expect([...sections].sort((a, b) => a - b)).toEqual(sections);
        const tableHeads = [
            /\| contender \| setup \| pages completed \|/g,
            /\| domains \| store \| requests \|/g,
            /\| setup \| requests \| gaps \| p50 lateness \| p99 lateness \|/g,
        ];
        expect(md.match(tableHeads[0])).toHaveLength(2); // B1 and B2
        expect(md.match(tableHeads[1])).toHaveLength(1); // B3
        expect(md.match(tableHeads[2])).toHaveLength(1); // B4
        const b3 = md.slice(sections[2], sections[3]);
        expect(b3).toMatch(/\| 1 \| bare RequestQueue \|/);
        expect(b3).toMatch(/\| 100 \| manager, `queueLayout: 'perDomain'` \|/);
        expect(b3).toMatch(/\| 100 \| manager, `queueLayout: 'shared'` \|/);
        for (const row of results.b3!) expect(row.layouts.map((l) => l.m?.completed)).toEqual([500, 500]);

        // Every contender did the same work: 2 sites × 6 pages.
        for (const scenario of [results.b1!, results.b2!]) {
            expect(scenario.contenders.map((c) => c.contender)).toEqual([
                'plain',
                'sameDomainDelay',
                'maxRequestsPerMinute',
                'throttler',
                'throttlerBackoffOnly',
            ]);
            for (const c of scenario.contenders) expect(c.pagesTotal).toBe(12);
        }
        expect(results.b4!.every((r) => r.samples > 0)).toBe(true);

        // The soak crawled every page of every site (discovered through links), lost nothing, and met
        // refusals and resets on the way; the table reports the loss and the heap over time.
        const b6 = results.b6!;
        const { sites, unlimitedSites, pages, unlimitedPages } = b6.options;
        const allUrls = unlimitedSites * (unlimitedPages + 1) + (sites - unlimitedSites) * (pages + 1);
        // On a timeout the diff shows where the crawl was stuck and the last progress lines.
        expect({ timedOut: b6.timedOut, atCap: b6.atCap }).toEqual({
            timedOut: false,
            atCap: b6.timedOut ? { ledger: b6.ledger, progress: lines.slice(-8) } : undefined,
        });
        expect(b6.ledger).toMatchObject({ enqueued: allUrls, lost: 0, unexpected: 0, handledTwice: 0 });
        expect(b6.ledger.handled + b6.ledger.failed).toBe(allUrls);
        expect(b6.server.resets).toBeGreaterThan(0);
        expect(b6.server.requests).toBeGreaterThan(allUrls);
        expect(b6.heap.length).toBeGreaterThan(2);
        expect(Number.isFinite(b6.lagP99Ms)).toBe(true);
        const b6Md = md.slice(sections[4]);
        expect(b6Md).toContain('| **requests lost** | **0** |');
        expect(b6Md).toMatch(
            /\| heap after GC at 10 \/ 50 \/ 90 \/ 100 % \| [\d.]+ MB \/ [\d.]+ MB \/ [\d.]+ MB \/ [\d.]+ MB \|/,
        );
        expect(b6Md).toMatch(/\| event-loop lag p50 \/ p99 \/ max \| [\d.]+ \/ [\d.]+ \/ [\d.]+ ms \|/);
    }, 240_000);
});
