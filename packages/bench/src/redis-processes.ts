import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { redisAnswers, runWorker } from '@crawlee-throttling/crawler-processes';
import { type PoliteWeb, type SiteOptions, startPoliteWeb } from '@crawlee-throttling/polite-web';
import { FileDomainClock, RedisDomainClock } from 'crawlee-throttling';

import { WORKER_ENV, type WorkerResult, type WorkerTask } from './redis-crawler-process';
import { countRedisCommands, measureSharedClockCost, type SharedClockCost } from './shared-clock-cost';

/** Sizes of B7. */
export interface RedisProcessesSizes {
    processCounts: number[];
    /** (a) rate-limited sites, every process at the site's rate. */
    pacing: { sites: number; pages: number; rate: number; maxConcurrency: number };
    /** (b) many unlimited sites: throughput. */
    throughput: { sites: number; pages: number; latencyMs: number; maxConcurrency: number };
    /** (c) reserves timed per store. */
    costCalls: number;
    /** All processes of a run start crawling this long after the first is spawned (they load at different speeds). */
    startInMs: number;
    /** Cap on one run. */
    timeoutMs: number;
}

export interface FleetRun {
    processes: number;
    shared: boolean;
    requests: number;
    refusals: number;
    handled: number;
    failed: number;
    /** First to last page arrival over all sites, ms. */
    makespanMs: number;
    /** Per site, the smallest gap between arrivals (ms), null with fewer than 2. */
    minGapMs: (number | null)[];
    /** Most a process started after the agreed moment, ms (0: they all started together). */
    lateMs: number;
}

export interface RedisProcessesResult {
    redisUrl: string;
    /** Set when no Redis answered: nothing else was run. */
    skipped?: string;
    pacing: FleetRun[];
    intervalMs: number;
    throughput: FleetRun[];
    cost: SharedClockCost[];
    sizes: RedisProcessesSizes;
}

/** The compiled worker (also when this module runs from src under jest: build first). */
const WORKER = join(__dirname, '..', 'dist', 'redis-crawler-process.js');

/** Every page of every site, dealt round-robin to `processes` lists: each process crawls a share of every site. */
function deal(web: PoliteWeb, pages: number, processes: number): string[][] {
    const lists: string[][] = Array.from({ length: processes }, () => []);
    // Page p of every site goes to process p mod N: every site is crawled by every process at once.
    for (let page = 0; page < pages; page++)
        for (const site of web.sites) lists[page % processes].push(web.url(site.host, `/page/${page}`));
    return lists;
}

interface FleetOptions {
    web: PoliteWeb;
    pages: number;
    processes: number;
    delaySecs: number;
    maxConcurrency: number;
    redis?: { url: string; keyPrefix: string };
    sizes: RedisProcessesSizes;
}

/** Runs `processes` crawler processes against a freshly reset `web`, all starting at one moment, and scores it. */
async function runFleet(o: FleetOptions): Promise<FleetRun> {
    o.web.reset();
    const startAt = Date.now() + o.sizes.startInMs;
    const results = await Promise.all(
        deal(o.web, o.pages, o.processes).map((urls, p) =>
            runWorker<WorkerTask, WorkerResult>({
                script: WORKER,
                envName: WORKER_ENV,
                task: {
                    urls,
                    proxyUrl: o.web.proxyUrl,
                    delaySecs: o.delaySecs,
                    maxConcurrency: o.maxConcurrency,
                    sites: o.web.sites.length,
                    startAt,
                    label: String(p + 1),
                    ...(o.redis ? { redis: o.redis } : {}),
                },
                killAfterMs: o.sizes.timeoutMs,
                name: `B7 crawler process ${p + 1}`,
            }),
        ),
    );
    const score = o.web.score();
    const sum = (pick: (r: WorkerResult) => number) => results.reduce((t, r) => t + pick(r), 0);
    return {
        processes: o.processes,
        shared: o.redis !== undefined,
        requests: score.totals.requests,
        refusals: score.totals.refusals,
        handled: sum((r) => r.handled),
        failed: sum((r) => r.failed),
        makespanMs: score.makespanMs,
        minGapMs: score.sites.map((s) => s.minGapMs),
        lateMs: Math.max(...results.map((r) => r.lateMs)),
    };
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
 * pacing of rate-limited sites with and without sharing, (b) throughput over many unlimited sites,
 * (c) the cost of one reserve in Redis beside FileDomainClock. Keys get a fresh prefix per run and
 * expire on their own once idle.
 */
export async function runRedisProcesses(
    sizes: RedisProcessesSizes,
    progress: (line: string) => void,
): Promise<RedisProcessesResult> {
    const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
    const intervalMs = 1000 / sizes.pacing.rate;
    const result: RedisProcessesResult = { redisUrl, pacing: [], intervalMs, throughput: [], cost: [], sizes };
    if (!(await redisAnswers(redisUrl))) {
        result.skipped = `no Redis at ${redisUrl} (start redis-server, or set REDIS_URL)`;
        progress(`B7 skipped: ${result.skipped}`);
        return result;
    }
    const prefix = () => `bench-b7:${randomBytes(4).toString('hex')}:`;
    const { pacing, throughput } = sizes;
    const paced = await startPoliteWeb({
        sites: siteList(pacing.sites, { rate: pacing.rate, burst: 1, pages: pacing.pages }),
    });
    try {
        for (const processes of sizes.processCounts)
            for (const shared of [true, false]) {
                progress(`B7 (a) ${processes} process(es), ${shared ? 'sharing Redis' : 'not sharing'}`);
                const redis = shared ? { url: redisUrl, keyPrefix: prefix() } : undefined;
                const common = { web: paced, pages: pacing.pages, delaySecs: 1 / pacing.rate, sizes };
                result.pacing.push(
                    await runFleet({ ...common, processes, maxConcurrency: pacing.maxConcurrency, redis }),
                );
            }
    } finally {
        await paced.close();
    }
    const open = await startPoliteWeb({
        sites: siteList(throughput.sites, { pages: throughput.pages, latencyMs: throughput.latencyMs }),
    });
    try {
        for (const processes of sizes.processCounts)
            for (const shared of [true, false]) {
                progress(`B7 (b) ${processes} process(es), ${shared ? 'sharing Redis' : 'not sharing'}`);
                const redis = shared ? { url: redisUrl, keyPrefix: prefix() } : undefined;
                const common = { web: open, pages: throughput.pages, delaySecs: 0, sizes };
                result.throughput.push(
                    await runFleet({ ...common, processes, maxConcurrency: throughput.maxConcurrency, redis }),
                );
            }
    } finally {
        await open.close();
    }
    progress('B7 (c) cost per reserve');
    result.cost = await measureCost(redisUrl, sizes.costCalls);
    return result;
}
