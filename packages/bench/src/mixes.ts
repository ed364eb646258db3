import type { RateLimitHeaderStyle, RetryAfterStyle, SiteOptions } from '@crawlee-throttling/polite-web';
import { seededRandom } from 'crawlee-throttling';

/**
 * B5's family of site mixes, drawn from a seed: rates 0.5–20 req/s, bursts 1–10, latency 0–300 ms,
 * every refusal style (429 or 503; `Retry-After` in seconds, as an HTTP-date or absent; RateLimit
 * headers or none), one site to dozens, short crawls (20 pages a site) and long ones (500).
 */
export interface Mix {
    seed: number;
    kind: 'short' | 'long';
    sites: SiteOptions[];
    /** Pages per site (all given up front). */
    pages: number;
    /** The slowest site's pages over its rate, ms: what no polite crawl can beat (bursts aside). */
    idealMs: number;
    /** The same with each site's rate as an obedient crawler can reach it (see `obedientRate`). */
    obedientIdealMs: number;
}

/** Draws of the family; long crawls keep to faster sites so one real-time run stays under a minute. */
export const MIX_RANGES = {
    rate: [0.5, 20],
    longRate: [8, 20],
    burst: [1, 10],
    latencyMs: [0, 300],
    shortPages: 20,
    longPages: 500,
    shortSiteCounts: [1, 2, 3, 5, 8, 12, 24],
    longSiteCounts: [1, 2, 3],
} as const;

const RETRY_AFTER: readonly RetryAfterStyle[] = ['seconds', 'http-date', 'none'];
const HEADERS: readonly RateLimitHeaderStyle[] = ['none', 'none', 'none', 'ietf', 'legacy', 'x-ratelimit'];

/** Overrides for smoke runs: fewer pages, no very slow site. */
export interface MixOverrides {
    pages?: number;
    minRate?: number;
}

/** One mix of the family; `longShare` of the seeds draw a long crawl. */
export function drawMix(seed: number, longShare = 0.25, overrides: MixOverrides = {}): Mix {
    const random = seededRandom(seed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
    const logUniform = ([low, high]: readonly [number, number]) => low * (high / low) ** random();
    const kind = random() < longShare ? 'long' : 'short';
    const count = pick(kind === 'long' ? MIX_RANGES.longSiteCounts : MIX_RANGES.shortSiteCounts);
    const pages = overrides.pages ?? (kind === 'long' ? MIX_RANGES.longPages : MIX_RANGES.shortPages);
    const rateRange = kind === 'long' ? MIX_RANGES.longRate : MIX_RANGES.rate;
    const low = Math.max(rateRange[0], overrides.minRate ?? 0);
    const sites: SiteOptions[] = Array.from({ length: count }, (_, i) => {
        const rate = round2(logUniform([Math.min(low, rateRange[1]), rateRange[1]]));
        return {
            host: `m${seed}-s${i + 1}.example`,
            rate,
            burst: 1 + Math.floor(random() * MIX_RANGES.burst[1]),
            latencyMs: random() < 0.3 ? 0 : Math.round(random() * MIX_RANGES.latencyMs[1]),
            refusal: {
                status: random() < 0.5 ? 429 : 503,
                retryAfter: pick(RETRY_AFTER),
                rateLimitHeaders: pick(HEADERS),
            },
            pages,
        };
    });
    const idealMs = Math.max(...sites.map((s) => (pages / s.rate!) * 1000));
    const obedientIdealMs = Math.max(...sites.map((s) => (pages / obedientRate(s)) * 1000));
    return { seed, kind, sites, pages, idealMs, obedientIdealMs };
}

/** `count` mixes from consecutive seeds starting at `firstSeed`. */
export function drawMixes(firstSeed: number, count: number, longShare?: number, overrides?: MixOverrides): Mix[] {
    return Array.from({ length: count }, (_, i) => drawMix(firstSeed + i, longShare, overrides));
}

/**
 * The rate a crawler that obeys the site's announcements can reach. A one-token bucket sending
 * RateLimit headers says "none left, full again in ⌈1 / rate⌉ s" (whole seconds) after every answer,
 * and an obedient crawler waits that long; a larger bucket paced just under its rate never runs dry.
 */
export function obedientRate(site: SiteOptions): number {
    const rate = site.rate ?? Number.POSITIVE_INFINITY;
    const announces = (site.refusal?.rateLimitHeaders ?? 'none') !== 'none';
    return announces && (site.burst ?? 1) === 1 ? Math.min(rate, 1 / Math.ceil(1 / rate)) : rate;
}

function round2(n: number): number {
    return Math.round(n * 100) / 100;
}
