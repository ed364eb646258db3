import type { Request } from '@crawlee/core';

import { ManualClock, RequestThrottledError, ThrottlingRequestManager } from '../../packages/throttling/src';
import type { ThrottlingRequestManagerOptions } from '../../packages/throttling/src';
import type { SiteOptions } from '../../packages/polite-web/src';
import { TokenBucket } from '../../packages/polite-web/src/token-bucket';
import { rateLimitHeaders } from '../../packages/polite-web/src/rate-limit-headers';
import { retryAfterValue } from '../../packages/polite-web/src/retry-after';
import { memoryConfig } from './storage';

/** What one simulated crawl did, per site and in total. */
export interface SimResult {
    done: number;
    pages: number;
    sent: number;
    refused: number;
    refusedShare: number;
    makespanMs: number;
    idealMs: number;
    ratio: number;
    /** Most requests in flight at once at any site. */
    maxInFlight: number;
    /** Per host: arrival time and whether it was refused. */
    arrivals: Map<string, { at: number; refused: boolean }[]>;
    manager: ThrottlingRequestManager;
}

interface InFlight {
    request: Request;
    host: string;
    doneAt: number;
    refused: boolean;
    headers: Record<string, string>;
    status: number;
}

const START = 1_780_000_000_000;

/**
 * A simulated site: polite-web's options, plus `refuseEvery`, a host that refuses every n-th request
 * it gets (after any token-bucket check) whatever the pace: a share of refusals no pace avoids.
 */
export type SimSite = SiteOptions & { refuseEvery?: number };

/**
 * Crawls simulated token-bucket sites with a `ThrottlingRequestManager` on a `ManualClock`: a crawler
 * of `crawlerConcurrency` tasks takes whatever the manager hands out, each site answers after its
 * latency (refusals at once, as an edge rate limiter does) with the headers polite-web would send.
 * No sleeping: the clock jumps to the next answer or the next ready time.
 */
export async function simulateCrawl(
    sites: SimSite[],
    pages: number,
    options: Partial<ThrottlingRequestManagerOptions> = {},
    crawlerConcurrency = 40,
    /** Stop after this much simulated time, done or not. */
    maxSimMs = Number.POSITIVE_INFINITY,
    /**
     * Called once a step, after the dispatches at `now` and before the clock moves on: every change
     * the answers and dispatches at `now` made to the pacing is visible (the pace plots read it here).
     */
    onStep?: (manager: ThrottlingRequestManager, now: number) => void,
): Promise<SimResult> {
    const clock = new ManualClock(START);
    const manager = new ThrottlingRequestManager(
        { domains: 'all', clock, respectCrawlDelay: false, maxFreeRetries: 1000, ...options },
        memoryConfig(),
    );
    const urls: string[] = [];
    for (let p = 0; p < pages; p++) for (const s of sites) urls.push(`https://${s.host}/page/${p}`);
    await manager.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
    const buckets = new Map(
        sites.map((s) => [s.host, new TokenBucket(s.rate ?? 1e9, s.rate ? (s.burst ?? 1) : 1e9, START)]),
    );
    const byHost = new Map(sites.map((s) => [s.host, s]));
    const arrivals = new Map<string, { at: number; refused: boolean }[]>(sites.map((s) => [s.host, []]));
    const inFlight: InFlight[] = [];
    const total = pages * sites.length;
    let done = 0;
    let maxInFlight = 0;
    for (let guard = 0; guard < 2_000_000 && done < total && clock.now() - START < maxSimMs; guard++) {
        while (inFlight.length < crawlerConcurrency) {
            const request = await manager.fetchNextRequest();
            if (!request) break;
            inFlight.push(arrive(request, clock.now(), byHost, buckets, arrivals));
        }
        onStep?.(manager, clock.now());
        for (const host of byHost.keys())
            maxInFlight = Math.max(maxInFlight, inFlight.filter((f) => f.host === host).length);
        const next = Math.min(...inFlight.map((f) => f.doneAt), manager.nextReadyAt() ?? Infinity);
        if (!Number.isFinite(next)) throw new Error(`simulation stuck at ${done}/${total}`);
        clock.set(Math.max(clock.now(), next));
        for (const f of inFlight.filter((x) => x.doneAt <= clock.now())) {
            inFlight.splice(inFlight.indexOf(f), 1);
            const response = { statusCode: f.status, headers: f.headers };
            if (!f.refused) {
                await manager.handleResponse({ request: f.request }, response);
                await manager.markRequestHandled(f.request);
                done++;
                continue;
            }
            const error = await manager.handleResponse({ request: f.request }, response).catch((e: unknown) => e);
            if (!(error instanceof RequestThrottledError)) throw new Error(`refusal not retried: ${String(error)}`);
            await manager.reclaimRequest(f.request);
        }
    }
    const all = [...arrivals.values()].flat();
    const sent = all.length;
    const refused = all.filter((a) => a.refused).length;
    const makespanMs = Math.max(...all.map((a) => a.at)) - Math.min(...all.map((a) => a.at));
    const idealMs = Math.max(...sites.map((s) => (pages / (s.rate ?? Infinity)) * 1000));
    return {
        done,
        pages: total,
        sent,
        refused,
        refusedShare: refused / sent,
        makespanMs,
        idealMs,
        ratio: makespanMs / idealMs,
        maxInFlight,
        arrivals,
        manager,
    };
}

function arrive(
    request: Request,
    now: number,
    byHost: Map<string, SimSite>,
    buckets: Map<string, TokenBucket>,
    arrivals: Map<string, { at: number; refused: boolean }[]>,
): InFlight {
    const host = new URL(request.url).hostname;
    const site = byHost.get(host)!;
    const bucket = buckets.get(host)!;
    const seen = arrivals.get(host)!;
    const refused =
        !bucket.tryTake(now) || (site.refuseEvery !== undefined && (seen.length + 1) % site.refuseEvery === 0);
    seen.push({ at: now, refused });
    const refusal = { status: 429, retryAfter: 'seconds', rateLimitHeaders: 'none', ...site.refusal } as const;
    const headers = rateLimitHeaders(refusal.rateLimitHeaders, {
        limit: bucket.burst,
        remaining: bucket.remaining(now),
        resetMs: bucket.msUntilFull(now),
        windowSeconds: Math.max(1, Math.ceil(bucket.burst / bucket.rate)),
        now,
    });
    // A few ms of network even at latency 0, so an unpaced crawl does not send infinitely fast.
    if (!refused)
        return { request, host, doneAt: now + Math.max(2, site.latencyMs ?? 0), refused, headers, status: 200 };
    const retryAfter = retryAfterValue(refusal.retryAfter, bucket.msUntilToken(now), now);
    if (retryAfter !== undefined) headers['Retry-After'] = retryAfter;
    return { request, host, doneAt: now + 1, refused, headers, status: refusal.status };
}
