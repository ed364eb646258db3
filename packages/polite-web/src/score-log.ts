import { isRobotsPath, type LogEntry } from './request-log';
import { normalizeHost } from './site-options';

/** The site fields scoring needs; both `SiteOptions` and `ResolvedSite` fit. */
export interface ScoredSite {
    host: string;
    rate?: number;
    crawlDelay?: number;
    pages?: number;
}

/** Options of {@link scoreLog}. */
export interface ScoreOptions {
    /**
     * Slack in ms when comparing a gap with the crawl delay, so timer jitter is not counted as impoliteness.
     * @default 5
     */
    toleranceMs?: number;
    /**
     * Pages per site used for `idealMs`: one number for every site, or a number per host.
     * @default each site's `pages` + 1 (the `/` page included), i.e. a full crawl
     */
    pages?: number | Record<string, number>;
}

/** How one site was treated. robots.txt requests are left out of every figure. */
export interface SiteScore {
    host: string;
    /** Requests that arrived. */
    requests: number;
    /** 2xx answers (responses cut off by a connection reset not counted). */
    served: number;
    /** Distinct paths answered 2xx. */
    distinctPagesServed: number;
    /** 429 and 503 answers. */
    refusals: number;
    /** refusals / requests (0 without requests). */
    refusedShare: number;
    /** Responses cut off by a connection reset (`connectionResets`). */
    resets: number;
    /** Smallest gap between consecutive arrivals, null with fewer than 2 requests. */
    minGapMs: number | null;
    /** Consecutive arrivals closer than the site's crawl delay minus the tolerance. */
    crawlDelayViolations: number;
    /** Most requests in flight at one arrival. */
    maxInFlight: number;
    /** First and last arrival, epoch ms (null without requests). */
    firstAt: number | null;
    lastAt: number | null;
    /** Reference crawl time: pages × the site's minimum interval (max of 1/rate and crawl delay); 0 if unlimited. */
    idealMs: number;
}

/** Sums over all sites. */
export interface ScoreTotals {
    requests: number;
    served: number;
    distinctPagesServed: number;
    refusals: number;
    refusedShare: number;
    resets: number;
    crawlDelayViolations: number;
    /** Max over sites. */
    maxInFlight: number;
    firstAt: number | null;
    lastAt: number | null;
}

/** Score of a whole web. */
export interface WebScore {
    sites: SiteScore[];
    totals: ScoreTotals;
    /** First arrival to last arrival over all sites (0 without requests). */
    makespanMs: number;
    /** Max of the sites' `idealMs`: sites can be crawled in parallel. */
    idealMs: number;
}

function isRefusal(entry: LogEntry): boolean {
    return entry.refused === true || entry.status === 429 || entry.status === 503;
}

function pagesFor(site: ScoredSite, option: ScoreOptions['pages']): number {
    if (typeof option === 'number') return option;
    const host = normalizeHost(site.host);
    const perHost = option && Object.entries(option).find(([h]) => normalizeHost(h) === host)?.[1];
    return perHost ?? (site.pages ?? 10) + 1;
}

function scoreSite(site: ScoredSite, entries: LogEntry[], options: ScoreOptions): SiteScore {
    const tolerance = options.toleranceMs ?? 5;
    // Arrival order is what matters; the server logs in that order, but synthetic logs may not be.
    const sorted = [...entries].sort((a, b) => a.time - b.time);
    let minGapMs: number | null = null;
    let crawlDelayViolations = 0;
    const delayMs = site.crawlDelay === undefined ? undefined : site.crawlDelay * 1000;
    for (let i = 1; i < sorted.length; i += 1) {
        const gap = sorted[i].time - sorted[i - 1].time;
        minGapMs = minGapMs === null ? gap : Math.min(minGapMs, gap);
        if (delayMs !== undefined && gap < delayMs - tolerance) crawlDelayViolations += 1;
    }
    const served = sorted.filter((e) => e.status >= 200 && e.status < 300 && !e.reset && !e.refused);
    const refusals = sorted.filter(isRefusal).length;
    const intervalMs = Math.max(site.rate ? 1000 / site.rate : 0, delayMs ?? 0);
    return {
        host: normalizeHost(site.host),
        requests: sorted.length,
        served: served.length,
        distinctPagesServed: new Set(served.map((e) => e.path)).size,
        refusals,
        refusedShare: sorted.length ? refusals / sorted.length : 0,
        resets: sorted.filter((e) => e.reset).length,
        minGapMs,
        crawlDelayViolations,
        maxInFlight: sorted.reduce((max, e) => Math.max(max, e.inFlightAtArrival), 0),
        firstAt: sorted.length ? sorted[0].time : null,
        lastAt: sorted.length ? sorted[sorted.length - 1].time : null,
        idealMs: pagesFor(site, options.pages) * intervalMs,
    };
}

/**
 * Scores a request log against the sites it was recorded on. Pure, so benchmarks can score saved logs
 * and tests can score synthetic ones. Entries for hosts not in `sites` and robots.txt requests are ignored.
 */
export function scoreLog(log: readonly LogEntry[], sites: readonly ScoredSite[], options: ScoreOptions = {}): WebScore {
    const byHost = new Map<string, LogEntry[]>(sites.map((s) => [normalizeHost(s.host), []]));
    for (const entry of log) {
        if (!isRobotsPath(entry.path)) byHost.get(normalizeHost(entry.site))?.push(entry);
    }
    const scores = sites.map((site) => scoreSite(site, byHost.get(normalizeHost(site.host)) ?? [], options));

    const sum = (pick: (s: SiteScore) => number): number => scores.reduce((total, s) => total + pick(s), 0);
    const times = scores.flatMap((s) => (s.firstAt === null || s.lastAt === null ? [] : [s.firstAt, s.lastAt]));
    const firstAt = times.length ? Math.min(...times) : null;
    const lastAt = times.length ? Math.max(...times) : null;
    const requests = sum((s) => s.requests);
    const refusals = sum((s) => s.refusals);
    return {
        sites: scores,
        totals: {
            requests,
            served: sum((s) => s.served),
            distinctPagesServed: sum((s) => s.distinctPagesServed),
            refusals,
            refusedShare: requests ? refusals / requests : 0,
            resets: sum((s) => s.resets),
            crawlDelayViolations: sum((s) => s.crawlDelayViolations),
            maxInFlight: scores.reduce((max, s) => Math.max(max, s.maxInFlight), 0),
            firstAt,
            lastAt,
        },
        makespanMs: firstAt === null || lastAt === null ? 0 : lastAt - firstAt,
        idealMs: scores.reduce((max, s) => Math.max(max, s.idealMs), 0),
    };
}
