import type { LogEntry } from '@crawlee-throttling/polite-web';

import { deal, type FleetRun } from '../../packages/bench/src/fleet-run';
import { busyCoresBetween } from '../../packages/bench/src/machine-usage';
import type { RedisProcessesResult, RedisProcessesSizes } from '../../packages/bench/src/redis-processes';
import { b7Section, throughputFigures } from '../../packages/bench/src/redis-processes-markdown';
import { steadyPace } from '../../packages/bench/src/steady-pace';

const web = (sites: number) => ({
    sites: Array.from({ length: sites }, (_, i) => ({ host: `site-${i}.example` })),
    url: (host: string, path: string) => `http://${host}${path}`,
});

describe('B7 dealing of pages to processes', () => {
    it('gives every process an even share even when the processes do not divide the pages', () => {
        // 5 pages over 4 processes: by page alone, the first process got 2 of every 5 pages.
        const lists = deal(web(400) as never, 5, 4);
        expect(lists.map((l) => l.length)).toEqual([500, 500, 500, 500]);
    });

    it('deals every page exactly once, and every process gets pages of every site', () => {
        const lists = deal(web(4) as never, 24, 4);
        const all = lists.flat();
        expect(new Set(all).size).toBe(4 * 24);
        expect(all).toHaveLength(4 * 24);
        for (const list of lists) {
            const hosts = new Set(list.map((u) => new URL(u).host));
            expect(hosts.size).toBe(4);
        }
    });
});

describe('B7 steady pace (second half of a site crawl)', () => {
    const entry = (time: number, status = 200, path = '/page/0', site = 'a.example'): LogEntry => ({
        site,
        path,
        time,
        status,
        inFlightAtArrival: 1,
    });

    it('counts accepted arrivals from halfway to the last arrival, per second', () => {
        // A fast search at the start (first half), then one accepted arrival every 250 ms.
        const early = [0, 10, 20, 30].map((t) => entry(t));
        const late = [5000, 5250, 5500, 5750, 6000, 6250, 6500, 6750, 7000, 7250, 7500, 7750].map((t) => entry(t));
        const entries = [...early, ...late, entry(10_000)];
        // Halfway is 5000: 13 accepted arrivals over 5 s.
        expect(steadyPace(entries, 'a.example')).toBeCloseTo(13 / 5, 5);
    });

    it('leaves out refusals, robots.txt and other sites', () => {
        const entries = [
            entry(0),
            entry(600, 429),
            entry(700, 200, '/robots.txt'),
            entry(800, 200, '/page/1', 'b.example'),
            entry(1000),
        ];
        // Halfway is 500: of 429, robots, b.example and the last page, only the last page counts.
        expect(steadyPace(entries, 'a.example')).toBeCloseTo(1 / 0.5, 5);
    });

    it('is null with fewer than two arrivals', () => {
        expect(steadyPace([entry(0)], 'a.example')).toBeNull();
        expect(steadyPace([], 'a.example')).toBeNull();
    });
});

describe('B7 machine usage', () => {
    it('turns the busy share of all CPU time into busy cores', () => {
        const start = { busy: 1000, total: 4000 };
        const end = { busy: 1000 + 1500, total: 4000 + 2000 };
        expect(busyCoresBetween(start, end, 2)).toBeCloseTo(1.5, 5);
    });
});

const run = (processes: number, shared: boolean, makespanMs: number, requests = 600): FleetRun => ({
    processes,
    shared,
    requests,
    refusals: 0,
    handled: requests,
    failed: 0,
    makespanMs,
    minGapMs: [200],
    steadyPace: [4.5],
    lateMs: 0,
    workers: Array.from({ length: processes }, () => ({
        cpuMs: 1000,
        peakConcurrency: 10,
        meanConcurrency: 9.5,
        paces: { 'site-0.example': 4.5 },
    })),
    machine: { busyCores: 1, ownCpuMs: 100, loadStart: 1, loadEnd: 2 },
});

describe('B7 scaling figures', () => {
    it('compares the most processes with 1, sharing Redis and not, each with its own baseline', () => {
        const runs = [run(1, true, 60_000), run(1, false, 50_000), run(4, true, 20_000), run(4, false, 12_500)];
        const f = throughputFigures(runs);
        expect(f.mostProcesses).toBe(4);
        expect(f.ratio).toBeCloseTo(3, 5);
        expect(f.unsharedRatio).toBeCloseTo(4, 5);
    });

    it('has no ratio without a run with 1 process', () => {
        expect(Number.isNaN(throughputFigures([run(2, true, 1000), run(2, false, 1000)]).ratio)).toBe(true);
    });
});

describe('B7 section', () => {
    const sizes: RedisProcessesSizes = {
        processCounts: [1, 4],
        pacing: { sites: 1, pages: 8, rate: 5, maxConcurrency: 4 },
        throughput: { sites: 10, pages: 5, latencyMs: 20, maxConcurrency: 10 },
        latencyBound: { sites: 200, pages: 3, latencyMs: 1000, maxConcurrency: 10 },
        adaptive: { sites: 1, pages: 80, rate: 5, maxConcurrency: 4, compareUnshared: false },
        costCalls: 10,
        startInMs: 0,
        timeoutMs: 1000,
    };
    const result: RedisProcessesResult = {
        redisUrl: 'redis://127.0.0.1:6379',
        intervalMs: 200,
        pacing: [run(1, true, 2000, 8)],
        throughput: [run(1, true, 30_000), run(4, true, 15_000)],
        latencyBound: [run(1, true, 64_000), run(1, false, 63_000), run(4, true, 16_500), run(4, false, 16_000)],
        adaptive: [run(1, true, 20_000, 80), run(4, true, 24_000, 80)],
        // Told the rate: 4.75 of 5 steady at 1 process, 4.5 at 4.
        adaptiveOracle: [{ ...run(1, true, 17_000, 80), steadyPace: [4.75] }, run(4, true, 18_000, 80)],
        cost: [],
        sizes,
    };
    const md = b7Section(result, { cores: 2 } as never);

    it('reports (b2) with both ratios, and (d) with steady and learned paces', () => {
        const b2 = md.slice(md.indexOf('### (b2)'), md.indexOf('### (c)'));
        expect(b2).toContain(
            '4 processes over 1: **3.88×** sharing Redis (target ≥ 3.2×: ✅), 3.94× each alone on 2 cores.',
        );
        expect(b2).toMatch(
            /\| 4 \| RedisDomainClock \| 600\/600 \| 0 \| 16\.5 s \| 36 \| 3\.88× \| 9\.5 \/ 9\.5 \/ 9\.5 \/ 9\.5 \| 0\.24 \+ 0\.01 \|/,
        );
        const d = md.slice(md.indexOf('### (d)'));
        // 4.5 req/s of 5 steady; each process learned 4.5; 24 s for 80 pages at 5 req/s is 1.5x ideal.
        expect(d).toMatch(
            /\| 4 \| RedisDomainClock \| 80\/80 \| 0\.0 % \(0\) \| 4\.50 \| 90\.0 % \| 4\.50 \/ 4\.50 \/ 4\.50 \/ 4\.50 \| 24\.0 s \(1\.50× ideal\) \|/,
        );
    });

    it('reports (d) beside its oracle, told the rate, and the learner over it by processes', () => {
        const d = md.slice(md.indexOf('### (d)'));
        expect(d).toMatch(
            /\| 4 \| RedisDomainClock, told the rate \(oracle\) \| 80\/80 \| .* \| 18\.0 s \(1\.13× ideal\) \|/,
        );
        // 4.5 / 4.75 at 1 process; 4.5 / 4.5 at 4.
        expect(d).toContain(
            'Steady pace told nothing over told the rate, sharing Redis, by processes: 1: 94.7 %, 4: 100.0 %.',
        );
    });

    it('says when (b) misses the target, with the ratio each alone beside it', () => {
        const b = md.slice(md.indexOf('### (b)'), md.indexOf('### (b2)'));
        expect(b).toContain('4 processes over 1: **2.00×** sharing Redis (target ≥ 3.2×: ❌) on 2 cores: ');
    });
});
