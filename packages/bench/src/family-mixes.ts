import type { SiteOptions } from '@crawlee-throttling/polite-web';
import { seededRandom } from 'crawlee-throttling';

import { limiterTruth, type LimiterTruth, type RealLimiterSpec } from './limiters/real-limiter';

/**
 * The kinds of site in B5's family: polite-web's own token buckets, fixed windows and slow servers, and
 * real limiters nobody here wrote (nginx, haproxy, express-rate-limit, rate-limiter-flexible).
 */
export const FAMILY_KINDS = [
    'bucket',
    'window',
    'slow',
    'nginx-limit-req',
    'nginx-limit-req-delay',
    'nginx-limit-conn',
    'haproxy',
    'express-rate-limit',
    'rate-limiter-flexible',
] as const;
export type FamilyKind = (typeof FAMILY_KINDS)[number];

/** One site of a mix, with what an oracle is told about it. */
export interface FamilySite {
    kind: FamilyKind;
    host: string;
    /** The polite-web site; a real limiter's gets `upstream` when it is started. */
    site: SiteOptions;
    /** The real limiter behind the site, if any. */
    limiter?: RealLimiterSpec;
    /** Its limit: a sustained rate (requests/s) or a concurrency cap. */
    truth: LimiterTruth;
    /** Requests/s it can deliver at best: its rate, or workers (or connections) over the time a page takes. */
    capacity: number;
    /** A page's response time with nothing else in flight, ms. */
    unloadedMs: number;
    /** A short description for the tables. */
    describe: string;
}

export interface FamilyMix {
    seed: number;
    kind: 'short' | 'long';
    pages: number;
    sites: FamilySite[];
    /** The slowest site's pages over its capacity, ms: what no polite crawl beats (bursts aside). */
    idealMs: number;
}

/** The ranges every parameter is drawn from. */
export const FAMILY_RANGES = {
    rate: [0.5, 20],
    longRate: [8, 20],
    burst: [1, 10],
    latencyMs: [0, 300],
    windowSecs: [1, 2, 5, 10],
    workers: [1, 8],
    msPerPage: [50, 400],
    conns: [1, 6],
    connLatencyMs: [100, 500],
    shortPages: 20,
    longPages: 500,
    shortSiteCounts: [1, 2, 3, 5, 8, 12],
    longSiteCounts: [1, 2, 3],
} as const;

/** Overrides for quick runs: fewer pages, no very slow site. */
export interface FamilyOverrides {
    pages?: number;
    minRate?: number;
}

type Random = () => number;

interface Draw {
    random: Random;
    pick: <T>(list: readonly T[]) => T;
    between: (range: readonly [number, number]) => number;
    logUniform: (range: readonly [number, number]) => number;
    rate: () => number;
}

function draw(random: Random, rateRange: readonly [number, number]): Draw {
    const between = ([low, high]: readonly [number, number]) => low + Math.floor(random() * (high - low + 1));
    const logUniform = ([low, high]: readonly [number, number]) => low * (high / low) ** random();
    return {
        random,
        pick: (list) => list[Math.floor(random() * list.length)],
        between,
        logUniform,
        rate: () => Math.round(logUniform(rateRange) * 100) / 100,
    };
}

/** A real limiter's site: polite-web forwards to it, the limiter decides. */
function realSite(host: string, spec: RealLimiterSpec, pages: number, describe: string): FamilySite {
    const truth = limiterTruth(spec);
    const unloadedMs = spec.latencyMs;
    const capacity = truth.rate ?? (truth.concurrency! * 1000) / Math.max(1, unloadedMs);
    const kind: FamilyKind =
        spec.kind === 'nginx-limit-req' && !spec.nodelay ? 'nginx-limit-req-delay' : (spec.kind as FamilyKind);
    return { kind, host, site: { host, pages }, limiter: spec, truth, capacity, unloadedMs, describe };
}

function drawSite(kind: FamilyKind, host: string, pages: number, d: Draw): FamilySite {
    const latency = () => (d.random() < 0.3 ? 0 : Math.round(d.random() * FAMILY_RANGES.latencyMs[1]));
    const status = (): 429 | 503 => (d.random() < 0.5 ? 429 : 503);
    switch (kind) {
        case 'bucket': {
            const rate = d.rate();
            const burst = d.between(FAMILY_RANGES.burst);
            const latencyMs = latency();
            const refusal = { status: status(), retryAfter: d.pick(['seconds', 'http-date', 'none'] as const) };
            const site = { host, rate, burst, latencyMs, refusal, pages };
            const describe = `bucket ${rate}/s burst ${burst}, ${refusal.status} ${refusal.retryAfter}`;
            return { kind, host, site, truth: { rate }, capacity: rate, unloadedMs: latencyMs, describe };
        }
        case 'window': {
            const windowSecs = d.pick(FAMILY_RANGES.windowSecs);
            const limit = Math.max(1, Math.round(d.rate() * windowSecs));
            const headers = d.pick(['draft-8', 'x-ratelimit', 'github', 'ietf', 'legacy'] as const);
            const start = d.random() < 0.7 ? ('first-request' as const) : ('epoch' as const);
            const latencyMs = latency();
            const refusal = { status: 429, retryAfter: 'seconds' as const, rateLimitHeaders: headers };
            const site = { host, window: { limit, windowSecs, start }, latencyMs, refusal, pages };
            const rate = limit / windowSecs;
            const describe = `window ${limit}/${windowSecs} s (${start}), ${headers}`;
            return { kind, host, site, truth: { rate }, capacity: rate, unloadedMs: latencyMs, describe };
        }
        case 'slow': {
            const workers = d.between(FAMILY_RANGES.workers);
            const msPerPage = d.between(FAMILY_RANGES.msPerPage);
            const queueLimit = d.random() < 0.3 ? d.between([2, 20]) : undefined;
            const service = { workers, msPerPage, ...(queueLimit === undefined ? {} : { queueLimit }) };
            const site = { host, service, refusal: { status: 503, retryAfter: 'none' as const }, pages };
            const capacity = (workers * 1000) / msPerPage;
            const describe = `slow ${workers} × ${msPerPage} ms${queueLimit === undefined ? '' : `, queue ${queueLimit}`}`;
            return { kind, host, site, truth: { concurrency: workers }, capacity, unloadedMs: msPerPage, describe };
        }
        case 'nginx-limit-req':
        case 'nginx-limit-req-delay': {
            const nodelay = kind === 'nginx-limit-req';
            // nginx takes whole requests per minute.
            const ratePerMin = Math.max(1, Math.round(d.rate() * 60));
            const burst = d.between([nodelay ? 0 : 1, FAMILY_RANGES.burst[1]]);
            const spec = {
                kind: 'nginx-limit-req',
                ratePerMin,
                burst,
                nodelay,
                status: status(),
                latencyMs: latency(),
            } as const;
            return realSite(
                host,
                spec,
                pages,
                `nginx ${ratePerMin} r/m burst ${burst}${nodelay ? ' nodelay' : ''}, ${spec.status}`,
            );
        }
        case 'nginx-limit-conn': {
            const conns = d.between(FAMILY_RANGES.conns);
            const latencyMs = d.between(FAMILY_RANGES.connLatencyMs);
            const spec = { kind: 'nginx-limit-conn', conns, status: status(), latencyMs } as const;
            return realSite(host, spec, pages, `nginx limit_conn ${conns} × ${latencyMs} ms, ${spec.status}`);
        }
        case 'haproxy': {
            const limitPer10s = Math.max(2, Math.round(d.rate() * 10));
            const spec = { kind: 'haproxy', limitPer10s, latencyMs: latency() } as const;
            return realSite(host, spec, pages, `haproxy ${limitPer10s} per 10 s`);
        }
        case 'express-rate-limit': {
            const windowSecs = d.pick(FAMILY_RANGES.windowSecs);
            const limit = Math.max(1, Math.round(d.rate() * windowSecs));
            const headers = d.random() < 0.5 ? ('draft-8' as const) : ('legacy' as const);
            const spec = { kind: 'express-rate-limit', limit, windowSecs, headers, latencyMs: latency() } as const;
            return realSite(host, spec, pages, `express-rate-limit ${limit}/${windowSecs} s, ${headers}`);
        }
        case 'rate-limiter-flexible': {
            const durationSecs = d.pick([1, 2, 5] as const);
            const points = Math.max(1, Math.round(d.rate() * durationSecs));
            const spec = { kind: 'rate-limiter-flexible', points, durationSecs, latencyMs: latency() } as const;
            return realSite(host, spec, pages, `rate-limiter-flexible ${points}/${durationSecs} s`);
        }
    }
}

/**
 * One mix of the family. Its first site's kind turns with the seed, so any run of consecutive seeds as
 * long as the list of kinds meets every kind; the others are drawn. `longShare` of the seeds draw a
 * long crawl (500 pages a site, faster sites so a run stays near a minute).
 */
export function drawFamilyMix(seed: number, longShare = 0.25, overrides: FamilyOverrides = {}): FamilyMix {
    const random = seededRandom(seed);
    const kind = random() < longShare ? 'long' : 'short';
    const rateRange = kind === 'long' ? FAMILY_RANGES.longRate : FAMILY_RANGES.rate;
    const low = Math.min(Math.max(rateRange[0], overrides.minRate ?? 0), rateRange[1]);
    const d = draw(random, [low, rateRange[1]]);
    const count = d.pick(kind === 'long' ? FAMILY_RANGES.longSiteCounts : FAMILY_RANGES.shortSiteCounts);
    const pages = overrides.pages ?? (kind === 'long' ? FAMILY_RANGES.longPages : FAMILY_RANGES.shortPages);
    const sites = Array.from({ length: count }, (_, i) => {
        const siteKind = i === 0 ? FAMILY_KINDS[seed % FAMILY_KINDS.length] : d.pick(FAMILY_KINDS);
        return drawSite(siteKind, `f${seed}-s${i + 1}.example`, pages, d);
    });
    const idealMs = Math.max(...sites.map((s) => (pages / s.capacity) * 1000));
    return { seed, kind, pages, sites, idealMs };
}

/** `count` mixes from consecutive seeds starting at `firstSeed`. */
export function drawFamilyMixes(
    firstSeed: number,
    count: number,
    longShare?: number,
    overrides?: FamilyOverrides,
): FamilyMix[] {
    return Array.from({ length: count }, (_, i) => drawFamilyMix(firstSeed + i, longShare, overrides));
}

/** The share of a site's rate the oracle is told to pace at (the issue's `delaySecs` = 1 / (0.95 × rate)). */
export const ORACLE_PACE_SHARE = 0.95;

/**
 * The oracle's per-site settings: told the rate, it paces at 95 % of it (`delaySecs` = 1 / (0.95 ×
 * rate)) with enough slots for the response time; told a concurrency cap, it holds that many in flight;
 * `rampup: false` either way.
 */
export function oracleScope(site: FamilySite): { delaySecs: number; concurrency: number; rampup: false } {
    const { rate, concurrency } = site.truth;
    if (rate === undefined) return { delaySecs: 0, concurrency: concurrency ?? 1, rampup: false };
    const slots = Math.max(1, Math.ceil((rate * (site.unloadedMs + 50)) / 1000) + 1);
    return { delaySecs: 1 / (ORACLE_PACE_SHARE * rate), concurrency: slots, rampup: false };
}
