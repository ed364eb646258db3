import type { LogEntry } from '@crawlee-throttling/polite-web';

import type { FamilyKind, FamilyMix } from './family-mixes';
import { median } from './stats';
import type { SiteArrival } from './twin-forced';

/** Response times are compared with at least this much, so a site answering in 1 ms does not turn 2 ms into 2×. */
export const RESPONSE_FLOOR_MS = 50;

/** How one site fared in one run. */
export interface FamilySiteRun {
    host: string;
    kind: FamilyKind;
    pages: number;
    completed: number;
    requests: number;
    refusals: number;
    /** First arrival to last answer at this site, ms (0 without requests). */
    makespanMs: number;
    /** Median response time of served pages over max(unloaded, {@link RESPONSE_FLOOR_MS}); NaN if none served. */
    responseRatio: number;
    /** Most of its requests in flight at one arrival. */
    maxInFlight: number;
    /** The wait the first refusal's `Retry-After` imposed, ms (0 without a refusal or a `Retry-After`). */
    firstRetryAfterMs: number;
    /** The second half of its requests, once the learner has converged: accepted ones a second, and refused ones. */
    late: LateHalf;
    /** Its requests in arrival order, as a twin bucket is checked against them (twin-forced.ts). */
    arrivals?: SiteArrival[];
}

/** The second half of a site's requests by arrival: what a long crawl keeps to after convergence. */
export interface LateHalf {
    requests: number;
    refusals: number;
    /** Served arrivals a second, from its first arrival to its last (0 with fewer than two). */
    servedPerSecond: number;
}

/** How one contender fared on one mix. */
export interface FamilyRunScore {
    pagesTotal: number;
    pagesCompleted: number;
    requests: number;
    refusals: number;
    refusedShare: number;
    /** First arrival to last answer over all sites, ms. */
    makespanMs: number;
    /** When the first request of any site arrived, epoch ms (0 without requests). */
    startedAt: number;
    /** The worst site's response ratio. */
    responseRatio: number;
    sites: FamilySiteRun[];
}

const isRefusal = (e: LogEntry) => e.refused === true || e.status === 429 || e.status === 503;
const isServed = (e: LogEntry) => e.status >= 200 && e.status < 300 && !e.refused && !e.reset;
const endOf = (e: LogEntry) => e.respondedAt ?? e.time;

/** The wait a refusal's `Retry-After` (seconds or an HTTP-date) imposed, ms; 0 without one. */
export function retryAfterMs(e: LogEntry | undefined): number {
    const value = e?.retryAfter?.trim();
    if (!e || !value) return 0;
    if (/^\d+$/.test(value)) return Number(value) * 1000;
    const at = Date.parse(value);
    return Number.isNaN(at) ? 0 : Math.max(0, at - e.time);
}

/** A request as a twin bucket is checked against it: when it arrived, refused or not, what it named or served. */
const arrivalOf = (e: LogEntry): SiteArrival => ({
    at: e.time,
    refused: isRefusal(e),
    ...(e.retryAfter === undefined ? {} : { retryAfter: e.retryAfter }),
    ...(isServed(e) ? { served: e.path } : {}),
});

/** The second half of `entries` by arrival: its requests, refusals, and served arrivals a second. */
export function lateHalf(entries: readonly LogEntry[]): LateHalf {
    const byArrival = [...entries].sort((a, b) => a.time - b.time);
    const half = byArrival.slice(Math.floor(byArrival.length / 2));
    // Served, not merely unrefused: a reset or an error delivered no page.
    const served = half.filter(isServed).length;
    const spanMs = half.length > 1 ? half[half.length - 1].time - half[0].time : 0;
    return {
        requests: half.length,
        refusals: half.filter(isRefusal).length,
        servedPerSecond: spanMs > 0 ? (Math.max(0, served - 1) * 1000) / spanMs : 0,
    };
}

/** Scores one run's log (robots.txt left out) against its mix. Pure. */
export function scoreFamilyRun(log: readonly LogEntry[], mix: FamilyMix): FamilyRunScore {
    const pageEntries = log.filter((e) => !e.path.startsWith('/robots.txt'));
    const sites = mix.sites.map((site): FamilySiteRun => {
        const entries = pageEntries.filter((e) => e.site === site.host);
        const served = entries.filter(isServed);
        const first = Math.min(...entries.map((e) => e.time));
        const last = Math.max(...entries.map(endOf));
        const times = served.filter((e) => e.respondedAt !== undefined).map((e) => e.respondedAt! - e.time);
        return {
            host: site.host,
            kind: site.kind,
            pages: mix.pages,
            completed: new Set(served.map((e) => e.path)).size,
            requests: entries.length,
            refusals: entries.filter(isRefusal).length,
            makespanMs: entries.length ? last - first : 0,
            responseRatio: median(times) / Math.max(site.unloadedMs, RESPONSE_FLOOR_MS),
            maxInFlight: entries.reduce((max, e) => Math.max(max, e.inFlightAtArrival), 0),
            firstRetryAfterMs: retryAfterMs(entries.find(isRefusal)),
            late: lateHalf(entries),
            arrivals: [...entries].sort((a, b) => a.time - b.time).map(arrivalOf),
        };
    });
    const own = pageEntries.filter((e) => mix.sites.some((s) => s.host === e.site));
    const requests = own.length;
    const refusals = own.filter(isRefusal).length;
    const ratios = sites.map((s) => s.responseRatio).filter((r) => !Number.isNaN(r));
    return {
        pagesTotal: mix.pages * mix.sites.length,
        pagesCompleted: sites.reduce((sum, s) => sum + s.completed, 0),
        requests,
        refusals,
        refusedShare: requests ? refusals / requests : 0,
        makespanMs: requests ? Math.max(...own.map(endOf)) - Math.min(...own.map((e) => e.time)) : 0,
        startedAt: requests ? Math.min(...own.map((e) => e.time)) : 0,
        responseRatio: ratios.length ? Math.max(...ratios) : NaN,
        sites,
    };
}
