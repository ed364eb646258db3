import type { Request } from '@crawlee/core';

import { ManualClock, parseRetryAfter, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { memoryConfig } from './storage';
import { oracleScope, SiteModel } from './sim-limiters';
import type { SimAnswer, SimSite } from './sim-limiters';
import { nextReadyAt } from './next-ready-at';
import { respond } from './answer-request';

export type { SimLimiter, SimSite } from './sim-limiters';
export { asRealLimiter, oracleScope, SiteModel } from './sim-limiters';

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
    /** Per host: arrival time, whether it was refused, and the wait a refusal's `Retry-After` named (ms). */
    arrivals: Map<string, SimArrival[]>;
    /** Per host: the median response time of accepted answers over the site's unloaded one. */
    responseRatio: Map<string, number>;
    /** Per host: the most requests in flight at once. */
    hostInFlight: Map<string, number>;
    manager: ThrottlingRequestManager;
}

/** Accepted arrivals a second over `part` of a site's arrivals, from its first arrival to its last. */
export function acceptedPerSecond(part: readonly SimArrival[]): number {
    const accepted = part.filter((a) => !a.refused).length;
    return ((accepted - 1) * 1000) / (part[part.length - 1].at - part[0].at);
}

/** Accepted arrivals a second over the second half of a site's `arrivals`: its rate once converged. */
export function lateAcceptedPerSecond(arrivals: readonly SimArrival[]): number {
    return acceptedPerSecond(arrivals.slice(Math.floor(arrivals.length / 2)));
}

export interface SimArrival {
    at: number;
    refused: boolean;
    /** The wait a refusal's `Retry-After` named, ms from its answer (0: none named). */
    retryAfterMs: number;
    /** Requests in flight to the site as it arrived, itself included. */
    inFlight: number;
}

interface InFlight extends SimAnswer {
    request: Request;
    host: string;
    sentAt: number;
}

export const START = 1_780_000_000_000;

/**
 * Crawls simulated sites (see sim-limiters.ts) with a `ThrottlingRequestManager` on a `ManualClock`: a
 * crawler of `crawlerConcurrency` tasks takes whatever the manager hands out, each site answers as its
 * limiter says. No sleeping: the clock jumps to the next answer or the next ready time.
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
    const models = new Map(sites.map((s) => [s.host, new SiteModel(s, START)]));
    const arrivals = new Map<string, SimArrival[]>(sites.map((s) => [s.host, []]));
    const times = new Map<string, number[]>(sites.map((s) => [s.host, []]));
    const hostInFlight = new Map<string, number>(sites.map((s) => [s.host, 0]));
    const inFlight: InFlight[] = [];
    const total = pages * sites.length;
    let done = 0;
    for (let guard = 0; guard < 2_000_000 && done < total && clock.now() - START < maxSimMs; guard++) {
        while (inFlight.length < crawlerConcurrency) {
            const request = await manager.fetchNextRequest();
            if (!request) break;
            const host = new URL(request.url).hostname;
            const now = clock.now();
            const answer = models.get(host)!.arrive(now);
            const retryAfterMs = answer.refused
                ? (parseRetryAfter(answer.headers['Retry-After'], answer.doneAt) ?? 0)
                : 0;
            inFlight.push({ ...answer, request, host, sentAt: now });
            const here = inFlight.filter((f) => f.host === host).length;
            arrivals.get(host)!.push({ at: now, refused: answer.refused, retryAfterMs, inFlight: here });
            hostInFlight.set(host, Math.max(hostInFlight.get(host)!, here));
        }
        onStep?.(manager, clock.now());
        const next = Math.min(...inFlight.map((f) => f.doneAt), (await nextReadyAt(manager)) ?? Infinity);
        if (!Number.isFinite(next)) throw new Error(`simulation stuck at ${done}/${total}`);
        clock.set(Math.max(clock.now(), next));
        for (const f of inFlight.filter((x) => x.doneAt <= clock.now())) {
            inFlight.splice(inFlight.indexOf(f), 1);
            if (!f.refused) {
                models.get(f.host)!.depart();
                times.get(f.host)!.push(f.doneAt - f.sentAt);
                done++;
            }
            await respond(manager, f.request, { statusCode: f.status, headers: f.headers }, f.refused);
        }
    }
    const all = [...arrivals.values()].flat();
    const sent = all.length;
    const refused = all.filter((a) => a.refused).length;
    const makespanMs = Math.max(...all.map((a) => a.at)) - Math.min(...all.map((a) => a.at));
    const idealMs = Math.max(...[...models.values()].map((m) => (pages / m.trueRate) * 1000));
    const responseRatio = new Map(
        [...times].map(([host, list]) => [host, median(list) / models.get(host)!.unloadedMs]),
    );
    return {
        done,
        pages: total,
        sent,
        refused,
        refusedShare: refused / sent,
        makespanMs,
        idealMs,
        ratio: makespanMs / idealMs,
        maxInFlight: Math.max(...hostInFlight.values()),
        arrivals,
        responseRatio,
        hostInFlight,
        manager,
    };
}

/** The median of a list (NaN when empty). */
export function median(xs: number[]): number {
    if (xs.length === 0) return Number.NaN;
    const s = [...xs].sort((a, b) => a - b);
    const mid = s.length >> 1;
    return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The same crawl told each site's limit (see `oracleScope`): the yardstick makespans are judged against. */
export function simulateOracle(sites: SimSite[], pages: number, crawlerConcurrency = 40, maxSimMs = Infinity) {
    const scopes = Object.fromEntries(sites.map((s) => [s.host, oracleScope(new SiteModel(s, START))]));
    return simulateCrawl(sites, pages, { rampup: false, scopes }, crawlerConcurrency, maxSimMs);
}
