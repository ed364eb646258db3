import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { runWorker } from '@crawlee-throttling/crawler-processes';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { RedisStorageClient } from 'crawlee-throttling/redis';

import type { CrawlRun, LiveView } from './crawl';
import { countLog } from './crawl';
import { WORKER_ENV, type WorkerResult, type WorkerTask } from './process-crawler';
import type { DemoSite } from './sites';

/** The compiled worker (also when this module runs from src under jest: build first). */
const WORKER = join(__dirname, '..', 'dist', 'process-crawler.js');

/** Processes load at different speeds: they all start crawling this long after the first is spawned. */
const START_IN_MS = 3_000;
const PROGRESS_EVERY_MS = 1_000;

/** The Redis the processes share (multi-process mode with `--redis`). */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * The throttler of every demo process: told each site's rate (one request per `1 / rate` s), as a
 * user who knows the limits would; adaptive pacing learns a rate per process until the learned rate
 * is shared. The 10 req/s profile may take two requests at a time (across all processes, with Redis).
 */
export function processThrottlerOptions(sites: readonly DemoSite[]): ThrottlingRequestManagerOptions {
    const scopes = Object.fromEntries(
        sites.map((s) => {
            const rate = s.options.rate ?? 1;
            return [
                s.options.host,
                { delaySecs: Math.round(1000 / rate) / 1000, ...(rate >= 10 ? { concurrency: 2 } : {}) },
            ];
        }),
    );
    return { domains: 'all', backoffStatusCodes: [429, 503], baseDelaySecs: 0.5, scopes };
}

/** Every page of every site (`/` first), page j of each site to process j mod `processes`. */
export function dealPages(web: PoliteWeb, sites: readonly DemoSite[], pages: number, processes: number): string[][] {
    const lists: string[][] = Array.from({ length: processes }, () => []);
    const paths = ['/', ...Array.from({ length: pages }, (_, i) => `/page/${i}`)];
    paths.forEach((path, j) => {
        for (const site of sites) lists[j % processes].push(web.url(site.options.host, path));
    });
    return lists;
}

function runDemoWorker(task: WorkerTask): Promise<WorkerResult> {
    return runWorker<WorkerTask, WorkerResult>({
        script: WORKER,
        envName: WORKER_ENV,
        task,
        // A process that does not end by itself well after its own cap is killed.
        killAfterMs: task.timeoutMs + START_IN_MS + 15_000,
        name: `Demo crawler process ${task.label}`,
    });
}

export interface ProcessesOptions {
    web: PoliteWeb;
    sites: readonly DemoSite[];
    pages: number;
    processes: number;
    /** Share the clocks in this Redis; undefined: every process paces alone. */
    redisUrl?: string;
    throttlerOptions: ThrottlingRequestManagerOptions;
    timeoutMs: number;
    onProgress?: (view: LiveView) => void;
}

/** Crawls the web with `processes` crawler processes, each its share of the pages, and scores it. */
export async function runProcesses(kind: CrawlRun['kind'], o: ProcessesOptions): Promise<CrawlRun> {
    const { web } = o;
    web.reset();
    const run = randomBytes(6).toString('hex');
    const redis = o.redisUrl
        ? { url: o.redisUrl, keyPrefix: `demo:${run}:`, storagePrefix: `demo-frontier:${run}` }
        : undefined;
    // On the shared frontier every process starts from every page: the frontier hands each out once.
    const lists = redis
        ? Array.from({ length: o.processes }, () => dealPages(web, o.sites, o.pages, 1)[0])
        : dealPages(web, o.sites, o.pages, o.processes);
    const startedAt = Date.now() + START_IN_MS;
    const progress = o.onProgress
        ? setInterval(() => {
              if (Date.now() >= startedAt) o.onProgress!(liveView(kind, web, startedAt, o.processes));
          }, PROGRESS_EVERY_MS)
        : undefined;
    let results: WorkerResult[];
    try {
        results = await Promise.all(
            lists.map((urls, p) =>
                runDemoWorker({
                    urls,
                    proxyUrl: web.proxyUrl,
                    throttlerOptions: o.throttlerOptions,
                    startAt: startedAt,
                    label: String(p + 1),
                    timeoutMs: o.timeoutMs,
                    ...(redis ? { redis } : {}),
                }),
            ),
        );
    } finally {
        if (progress) clearInterval(progress);
        if (redis) await dropFrontier(redis.url, redis.storagePrefix);
    }
    o.onProgress?.(liveView(kind, web, startedAt, o.processes));
    return crawlRun(kind, o, results, startedAt, redis !== undefined);
}

/** Deletes the run's frontier from Redis once every process has ended. */
async function dropFrontier(url: string, prefix: string): Promise<void> {
    const storage = new RedisStorageClient({ url, prefix });
    try {
        await storage.dropAll();
    } finally {
        await storage.teardown();
    }
}

/** The run as the summary and the report read it: the server's log, each entry with its process. */
function crawlRun(
    kind: CrawlRun['kind'],
    o: ProcessesOptions,
    results: WorkerResult[],
    startedAt: number,
    shared: boolean,
): CrawlRun {
    const { web } = o;
    return {
        kind,
        label: `${o.processes} CheerioCrawler processes + ThrottlingRequestManager, ${shared ? 'sharing one frontier (RedisStorageClient) and one RedisDomainClock' : 'each pacing alone'}`,
        heading: `${o.processes} processes, ${shared ? 'one frontier and one RedisDomainClock' : 'no shared clock'}`,
        startedAt,
        durationMs: Date.now() - startedAt,
        entries: web.log.map((e) => ({
            site: e.site,
            path: e.path,
            t: e.time - startedAt,
            status: e.status,
            ...(e.client === undefined ? {} : { client: e.client }),
        })),
        backoffs: {},
        rates: {},
        score: web.score(),
        requestsFinished: results.reduce((t, r) => t + r.finished, 0),
        requestsFailed: results.reduce((t, r) => t + r.failed, 0),
        timedOut: results.some((r) => r.timedOut),
        processes: o.processes,
    };
}

function liveView(kind: CrawlRun['kind'], web: PoliteWeb, startedAt: number, processes: number): LiveView {
    const byProcess = new Map<string, Map<string, number>>();
    for (const e of web.log) {
        if (e.path === '/robots.txt' || e.client === undefined) continue;
        const counts = byProcess.get(e.site) ?? new Map<string, number>();
        counts.set(e.client, (counts.get(e.client) ?? 0) + 1);
        byProcess.set(e.site, counts);
    }
    return {
        kind,
        title: `${processes} processes, ${kind === 'throttled' ? 'one frontier and one RedisDomainClock' : 'no shared clock'}`,
        elapsedMs: Date.now() - startedAt,
        ...countLog(web),
        byProcess,
        processes,
    };
}
