import { retryAfterValue, TokenBucket } from '@crawlee-throttling/polite-web';
import type { RetryAfterStyle } from '@crawlee-throttling/polite-web';
import { FAMILY_RANGES } from './family-mixes';
import { familyGrid } from './allowance-bound';

/**
 * Refusals at a token bucket that a twin forces, given what the learner sent before them
 * (docs/rampup-bounds.md, "A twin after the burst"). A twin is another bucket of B5's family, with the same
 * answer time and the same way of refusing, that gave every answer up to a refusal exactly as the site
 * did, `Retry-After` header included: a learner could not tell the two apart when it sent the refused
 * request. The refusal is forced when the twin holds the learner to all three of these:
 *
 * - the learner could still crawl the twin within its line (1.3 × the least possible + the first
 *   `Retry-After`) with no refusal more, so the history has not lost it already;
 * - the learner has already spent the twin's whole allowance, so a refusal there puts it over;
 * - every way to send the pages left without another refusal at the site ends past the twin's line.
 *
 * So from that history, any learner either takes a refusal at the site, or runs past its line at the
 * twin, or takes a refusal over its allowance there (where the two first answer apart, the twin refuses
 * a request the site accepts). The count is conditional on the history: it excuses no refusal a learner
 * could have avoided from where it stood, whatever it did before. Pure.
 */

/** One request at a site as the judge reads it, in arrival order. */
export interface SiteArrival {
    /** When it arrived, epoch ms. */
    at: number;
    refused: boolean;
    /** The `Retry-After` a refusal named, verbatim (undefined: none). */
    retryAfter?: string;
    /** The page it served (undefined: refused, or no page delivered). */
    served?: string;
}

/** A token bucket site: polite-web's rate, burst and answer time, and how it refuses. */
export interface BucketSite {
    rate: number;
    burst: number;
    latencyMs: number;
    retryAfter: RetryAfterStyle;
}

/** What the mix a site was crawled in says of a twin's line: the same mix with the twin in the site's place. */
export interface MixLine {
    /** When the mix's first request arrived, epoch ms. */
    startedAt: number;
    /** The least possible makespan of the mix's other sites (the oracle's, or a concurrency bound), ms. */
    othersLeastMs: number;
    /** The longest first wait any of its sites named, ms: the line allows it on top. */
    firstWaitMs: number;
    /** Pages per site. */
    pages: number;
}

/**
 * The lag each of the oracle's intervals gains on a loaded machine, ms: twice the 5 ms B5 measured
 * (docs/rampup-bounds.md, "A long crawl on a loaded machine"). A twin's oracle is modelled, not run; the lag
 * lengthens it, so the twin's line is never tighter than a run would make it.
 */
const ORACLE_LAG_MS = 10;

/** A bucket at the state `arrivals` left it in, or undefined where it answers any of them otherwise. */
function replay(site: BucketSite, arrivals: readonly SiteArrival[], upTo: number): TokenBucket | undefined {
    const bucket = new TokenBucket(site.rate, site.burst, arrivals[0].at);
    for (let i = 0; i < upTo; i++) {
        const { at, refused, retryAfter } = arrivals[i];
        const waitMs = bucket.msUntilToken(at);
        if (bucket.tryTake(at) === refused) return undefined;
        if (refused && retryAfterValue(site.retryAfter, waitMs, at) !== retryAfter) return undefined;
    }
    return bucket;
}

/** When the last of `pages` sent from `from` on, each as soon as `bucket` holds a token, is answered. */
function safeFinish(bucket: TokenBucket, from: number, pages: number, latencyMs: number): number {
    let at = from;
    for (let i = 0; i < pages; i++) {
        at += bucket.msUntilToken(at);
        // A token that refilled to a hair under one is taken a millisecond later.
        while (!bucket.tryTake(at)) at += 1;
    }
    return at + latencyMs;
}

/** The oracle's makespan at `site` alone: told its rate, pacing at 0.95 of it from the first page. */
function oracleMs(site: BucketSite, pages: number): number {
    return site.latencyMs + (pages - 1) * (1000 / (0.95 * site.rate) + ORACLE_LAG_MS);
}

/** The buckets of B5's family that answer in `latencyMs` and refuse in `retryAfter`'s way. */
function twinsOf(site: BucketSite): BucketSite[] {
    return familyGrid()
        .map(({ rate, burst }) => ({ ...site, rate: Math.round(rate * 100) / 100, burst }))
        .filter((twin) => twin.rate !== site.rate || twin.burst !== site.burst);
}

/**
 * How many of `site`'s refusals past `base` a twin forces: each refusal beyond what is allowed so far
 * is tried in arrival order, and one that is forced is allowed too. `allowance` gives a twin's own
 * (restated) allowance. 0 where replaying the site's bucket does not give the logged answers.
 */
export function twinForcedRefusals(
    site: BucketSite,
    arrivals: readonly SiteArrival[],
    line: MixLine,
    base: number,
    allowance: (twin: BucketSite) => number,
): number {
    if (arrivals.length === 0 || replay(site, arrivals, arrivals.length) === undefined) return 0;
    let refused = 0;
    let forced = 0;
    for (let k = 0; k < arrivals.length; k++) {
        if (!arrivals[k].refused) continue;
        if (refused >= base + forced && isForced(site, arrivals, k, refused, line, allowance)) forced++;
        refused++;
    }
    return forced;
}

/** Whether the refusal of arrival `k`, after `refusedBefore` refusals, is forced by a twin. */
function isForced(
    site: BucketSite,
    arrivals: readonly SiteArrival[],
    k: number,
    refusedBefore: number,
    line: MixLine,
    allowance: (twin: BucketSite) => number,
): boolean {
    if (k === 0) return false;
    const served = new Set(arrivals.slice(0, k).flatMap((a) => (a.served === undefined ? [] : [a.served])));
    const left = line.pages - served.size;
    const from = arrivals[k - 1].at;
    const lineFor = (twin: BucketSite) =>
        line.startedAt + 1.3 * Math.max(line.othersLeastMs, oracleMs(twin, line.pages)) + line.firstWaitMs;
    const here = safeFinish(replay(site, arrivals, k)!, from, left, site.latencyMs);
    // No twin's line is earlier than the fastest twin's: sending the rest safely within it forces nothing.
    if (here <= lineFor({ ...site, rate: FAMILY_RANGES.rate[1] })) return false;
    return twinsOf(site).some((twin) => {
        if (here <= lineFor(twin) || allowance(twin) > refusedBefore) return false;
        const bucket = replay(twin, arrivals, k);
        return bucket !== undefined && safeFinish(bucket, from, left, twin.latencyMs) <= lineFor(twin);
    });
}
