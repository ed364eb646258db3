import { randomBytes } from 'node:crypto';

import { redisAnswers } from '@crawlee-throttling/crawler-processes';
import { type SiteOptions, startPoliteWeb } from '@crawlee-throttling/polite-web';
import { RedisStorageClient } from 'crawlee-throttling/redis';
import type { Redis } from 'ioredis';

import { type FrontierRun, runFrontierFleet } from './frontier-fleet';

/** Sizes of B8. */
/**
 * The share of a paced site's rate the throttler is told, as B5's oracle is: arrivals differ from
 * departures by the way through the socket and the proxy, on a machine four crawlers load, and a
 * burst-1 bucket told its exact rate refuses the request that follows a late one.
 */
export const TOLD_RATE_SHARE = 0.95;

export interface FrontierSizes {
    processCounts: number[];
    /** The link graph: sites (the first `pacedSites` of them paced at `pacedRate`), pages each, latency. */
    sites: number;
    pacedSites: number;
    pacedRate: number;
    pages: number;
    latencyMs: number;
    maxConcurrency: number;
    lockSecs: number;
    /** The kill run: processes, and the pages process 1 handles before its SIGKILL. */
    killProcesses: number;
    killAfterPages: number;
    /** Requests added for the memory measurement. */
    memoryRequests: number;
    timeoutMs: number;
}

/** Redis memory per request, pending and once handled. */
export interface FrontierMemory {
    requests: number;
    pendingBytesPerRequest: number;
    handledBytesPerRequest: number;
}

export interface FrontierResultSet {
    redisUrl: string;
    skipped?: string;
    runs: FrontierRun[];
    memory?: FrontierMemory;
    sizes: FrontierSizes;
}

const usedMemory = async (redis: Redis) => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);

/** Adds `count` requests to one queue, then marks them handled, measuring Redis's memory at each step. */
async function measureMemory(url: string, count: number): Promise<FrontierMemory> {
    const client = new RedisStorageClient({ url, prefix: `bench-b8-memory-${randomBytes(4).toString('hex')}` });
    try {
        const redis = client.connection as Redis;
        const { id } = await client.requestQueues().getOrCreate('memory');
        const queue = client.requestQueue(id, { clientKey: 'bench' });
        const at = (i: number) => `http://site-${i % 50}.example/page/${i}?ref=bench`;
        const base = await usedMemory(redis);
        for (let i = 0; i < count; i += 500) {
            const batch = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
                url: at(i + j),
                uniqueKey: at(i + j),
                method: 'GET' as const,
                userData: {},
            }));
            await queue.batchAddRequests(batch);
        }
        const pending = await usedMemory(redis);
        for (let left = count; left > 0; left -= 25) {
            const { items } = await queue.listAndLockHead({ limit: 25, lockSecs: 60 });
            if (items.length === 0) break;
            for (const item of items)
                await queue.updateRequest({
                    ...(item as never as { id: string; url: string; uniqueKey: string }),
                    handledAt: new Date().toISOString(),
                });
        }
        const handled = await usedMemory(redis);
        return {
            requests: count,
            pendingBytesPerRequest: (pending - base) / count,
            handledBytesPerRequest: (handled - base) / count,
        };
    } finally {
        await client.dropAll();
        await client.teardown();
    }
}

/** The probes of a run summed over its processes (ms and calls per method), for the progress log. */
function probeSummary(run: FrontierRun): Record<string, unknown> {
    const calls: Record<string, [number, number, number]> = {};
    for (const p of run.probes ?? [])
        for (const [name, t] of Object.entries(p?.tallies ?? {})) {
            const sum = (calls[name] ??= [0, 0, 0]);
            sum[0] += t.calls;
            sum[1] += Math.round(t.ms);
            sum[2] += t.empty;
        }
    return {
        makespanMs: run.makespanMs,
        idleWithWorkSlotSecs: run.idleWithWorkSlotSecs,
        refusalGaps: run.refusalGaps,
        perProcess: (run.probes ?? []).map((p) => ({
            meanInFlight: p && Math.round(p.meanInFlight * 10) / 10,
            idleUncounted: p && `${p.idleUncounted}/${p.samples}`,
            handoutToSendMs: p?.handoutToSendMs,
        })),
        calls: Object.fromEntries(
            Object.entries(calls).map(([k, [c, ms, e]]) => [k, `${c} calls ${ms} ms ${e} empty`]),
        ),
    };
}

/**
 * B8: 1, 2 and 4 crawler processes on one Redis (RedisStorageClient and RedisDomainClock) crawl a
 * link graph over many slow sites, some paced and some free, from the same roots; one process on
 * memory-storage is the baseline; a run SIGKILLs a process mid-crawl. Then Redis's memory per request.
 */
export async function runFrontierBench(
    sizes: FrontierSizes,
    progress: (line: string) => void,
): Promise<FrontierResultSet> {
    const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
    const result: FrontierResultSet = { redisUrl, runs: [], sizes };
    if (!(await redisAnswers(redisUrl))) {
        result.skipped = `no Redis at ${redisUrl} (start redis-server, or set REDIS_URL)`;
        progress(`B8 skipped: ${result.skipped}`);
        return result;
    }
    const hosts = Array.from({ length: sizes.sites }, (_, i) =>
        i < sizes.pacedSites ? `paced-${i}.example` : `free-${i}.example`,
    );
    const pacedHosts = hosts.slice(0, sizes.pacedSites);
    // Each site links the next one's root, so the graph is one connected crawl whatever the roots.
    const sites: SiteOptions[] = hosts.map((host, i) => ({
        host,
        pages: sizes.pages,
        latencyMs: sizes.latencyMs,
        crossLinks: [hosts[(i + 1) % hosts.length]],
        ...(i < sizes.pacedSites ? { rate: sizes.pacedRate, burst: 1 } : {}),
    }));
    const web = await startPoliteWeb({ sites });
    const adminClient = new RedisStorageClient({ url: redisUrl, prefix: 'bench-b8-admin' });
    const admin = adminClient.connection as Redis;
    const common = {
        web,
        pacedHosts,
        pacedDelaySecs: 1 / (TOLD_RATE_SHARE * sizes.pacedRate),
        pacedConcurrency: Math.ceil((sizes.latencyMs / 1000) * sizes.pacedRate) + 1,
        maxConcurrency: sizes.maxConcurrency,
        lockSecs: sizes.lockSecs,
        timeoutMs: sizes.timeoutMs,
        probe: process.env.B8_PROBE === '1',
    };
    const prefixes: string[] = [];
    const redis = () => {
        const prefix = `bench-b8-${randomBytes(4).toString('hex')}`;
        prefixes.push(prefix);
        return { url: redisUrl, prefix, admin };
    };
    try {
        progress('B8 1 process on memory-storage (baseline)');
        result.runs.push(await runFrontierFleet({ ...common, processes: 1 }));
        for (const processes of sizes.processCounts) {
            progress(`B8 ${processes} process(es) on one Redis`);
            const run = await runFrontierFleet({ ...common, processes, redis: redis() });
            result.runs.push(run);
            if (run.probes) progress(`B8 probe ${processes}: ${JSON.stringify(probeSummary(run))}`);
        }
        progress(`B8 ${sizes.killProcesses} processes, one SIGKILLed mid-crawl`);
        result.runs.push(
            await runFrontierFleet({
                ...common,
                processes: sizes.killProcesses,
                redis: redis(),
                killAfterPages: sizes.killAfterPages,
            }),
        );
        progress('B8 Redis memory per request');
        result.memory = await measureMemory(redisUrl, sizes.memoryRequests);
    } finally {
        await web.close();
        for (const prefix of prefixes) await new RedisStorageClient({ client: admin, prefix }).dropAll();
        await adminClient.teardown();
    }
    return result;
}
