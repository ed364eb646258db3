import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { redisAnswers } from '@crawlee-throttling/crawler-processes';
import { type SiteOptions, startPoliteWeb } from '@crawlee-throttling/polite-web';
import { FileDomainClock } from 'crawlee-throttling';
import { RedisDomainClock } from 'crawlee-throttling/redis';

import { type FleetOptions, type FleetRun, runFleet } from './fleet-run';
import { TOLD_RATE_SHARE } from './frontier-bench';
import { countRedisCommands, measureSharedClockCost, type SharedClockCost } from './shared-clock-cost';

/** Sizes of B7. */
export interface RedisProcessesSizes {
    processCounts: number[];
    /** (a) rate-limited sites, every process at the site's rate. */
    pacing: { sites: number; pages: number; rate: number; maxConcurrency: number };
    /** (b) many unlimited sites: throughput (Crawlee's autoscaled pool sets the concurrency, up to the max). */
    throughput: { sites: number; pages: number; latencyMs: number; maxConcurrency: number };
    /** (b2) the same with slow sites and every process at maxConcurrency throughout: bound by latency, not CPU. */
    latencyBound: { sites: number; pages: number; latencyMs: number; maxConcurrency: number };
    /** (d) as (a), but the processes are told no rate (adaptive pacing, the default). */
    adaptive: { sites: number; pages: number; rate: number; maxConcurrency: number; compareUnshared: boolean };
    /** (c) reserves timed per store. */
    costCalls: number;
    /** All processes of a run start crawling this long after the first is spawned (they load at different speeds). */
    startInMs: number;
    /** Cap on one run. */
    timeoutMs: number;
}

export type { FleetRun } from './fleet-run';

export interface RedisProcessesResult {
    redisUrl: string;
    /** Set when no Redis answered: nothing else was run. */
    skipped?: string;
    pacing: FleetRun[];
    intervalMs: number;
    throughput: FleetRun[];
    latencyBound: FleetRun[];
    adaptive: FleetRun[];
    /** (d)'s oracle: the same crawl told each site's rate (`delaySecs` 1 / (0.95 × rate), `rampup: false`), sharing Redis. */
    adaptiveOracle: FleetRun[];
    cost: SharedClockCost[];
    sizes: RedisProcessesSizes;
}

async function measureCost(redisUrl: string, calls: number): Promise<SharedClockCost[]> {
    const dir = mkdtempSync(join(tmpdir(), 'b7-cost-'));
    const redisClock = new RedisDomainClock({
        url: redisUrl,
        keyPrefix: `bench-b7:${randomBytes(4).toString('hex')}:`,
    });
    const commandsSent = countRedisCommands(redisClock);
    try {
        const rows: SharedClockCost[] = [];
        for (const cycle of ['reserve', 'dispatch'] as const) {
            const fileClock = new FileDomainClock(dir);
            rows.push(await measureSharedClockCost({ store: 'FileDomainClock', clock: fileClock, calls, cycle }));
            const store = 'RedisDomainClock (localhost)';
            rows.push(await measureSharedClockCost({ store, clock: redisClock, calls, commandsSent, cycle }));
        }
        return rows;
    } finally {
        await redisClock.close();
        rmSync(dir, { recursive: true, force: true });
    }
}

const siteList = (n: number, extra: Partial<SiteOptions>): SiteOptions[] =>
    Array.from({ length: n }, (_, i) => ({ host: `site-${i}.example`, ...extra }));

/**
 * B7: 1, 2 and 4 crawler processes sharing one Redis (RedisDomainClock), against polite-web: (a)
 * pacing of rate-limited sites with and without sharing, (b) throughput over many unlimited sites
 * (CPU-bound on a small machine) and (b2) over slow ones (bound by concurrency and latency), (c) the
 * cost of one reserve in Redis beside FileDomainClock, (d) as (a) with the rate left to adaptive pacing. Keys get a fresh prefix per run and
 * expire on their own once idle.
 */
export async function runRedisProcesses(
    sizes: RedisProcessesSizes,
    progress: (line: string) => void,
): Promise<RedisProcessesResult> {
    const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
    const intervalMs = 1000 / sizes.pacing.rate;
    const result: RedisProcessesResult = {
        redisUrl,
        pacing: [],
        intervalMs,
        throughput: [],
        latencyBound: [],
        adaptive: [],
        adaptiveOracle: [],
        cost: [],
        sizes,
    };
    if (!(await redisAnswers(redisUrl))) {
        result.skipped = `no Redis at ${redisUrl} (start redis-server, or set REDIS_URL)`;
        progress(`B7 skipped: ${result.skipped}`);
        return result;
    }
    const prefix = () => `bench-b7:${randomBytes(4).toString('hex')}:`;
    const { pacing, throughput, latencyBound, adaptive } = sizes;
    const timing = { startInMs: sizes.startInMs, timeoutMs: sizes.timeoutMs };
    /** Every process count, sharing Redis and (unless `sharedOnly`) not, on a web started for the series. */
    const series = async (
        name: string,
        sites: SiteOptions[],
        fleet: Omit<FleetOptions, 'web' | 'processes' | 'redis' | 'startInMs' | 'timeoutMs'>,
        sharedOnly = false,
    ): Promise<FleetRun[]> => {
        const web = await startPoliteWeb({ sites });
        const runs: FleetRun[] = [];
        try {
            for (const processes of sizes.processCounts)
                for (const shared of sharedOnly ? [true] : [true, false]) {
                    progress(`B7 ${name} ${processes} process(es), ${shared ? 'sharing Redis' : 'not sharing'}`);
                    const redis = shared ? { url: redisUrl, keyPrefix: prefix() } : undefined;
                    runs.push(await runFleet({ ...fleet, ...timing, web, processes, redis }));
                }
        } finally {
            await web.close();
        }
        return runs;
    };
    const rated = (s: { sites: number; rate: number; pages: number }) =>
        siteList(s.sites, { rate: s.rate, burst: 1, pages: s.pages });
    const unlimited = (s: { sites: number; pages: number; latencyMs: number }) =>
        siteList(s.sites, { pages: s.pages, latencyMs: s.latencyMs });
    const { maxConcurrency } = pacing;
    result.pacing = await series('(a)', rated(pacing), {
        pages: pacing.pages,
        delaySecs: 1 / pacing.rate,
        maxConcurrency,
    });
    result.throughput = await series('(b)', unlimited(throughput), {
        pages: throughput.pages,
        delaySecs: 0,
        maxConcurrency: throughput.maxConcurrency,
    });
    result.latencyBound = await series('(b2)', unlimited(latencyBound), {
        pages: latencyBound.pages,
        delaySecs: 0,
        maxConcurrency: latencyBound.maxConcurrency,
        fixedConcurrency: true,
    });
    result.adaptive = await series(
        '(d)',
        rated(adaptive),
        { pages: adaptive.pages, maxConcurrency: adaptive.maxConcurrency },
        !adaptive.compareUnshared,
    );
    result.adaptiveOracle = await series(
        '(d) oracle',
        rated(adaptive),
        {
            pages: adaptive.pages,
            delaySecs: 1 / (TOLD_RATE_SHARE * adaptive.rate),
            noRampup: true,
            maxConcurrency: adaptive.maxConcurrency,
        },
        true,
    );
    progress('B7 (c) cost per reserve');
    result.cost = await measureCost(redisUrl, sizes.costCalls);
    return result;
}
