import { FAMILY_RANGES } from './family-mixes';

/**
 * The least makespan ÷ oracle on a short crawl of a concurrency limit for a learner told nothing that
 * also keeps to the restated refusal allowance at every token bucket of B5's family
 * (docs/rampup-bounds.md, "Refusals pay for concurrency"). Until a bucket runs dry it answers as the
 * concurrency-limited site does, so the learner sends both the same requests; every request in flight
 * when the bucket runs dry is refused before the first refusal is back, and a bucket of the family
 * whose answers take as long as the site's can run dry at any moment of a short crawl. Pure: the
 * bound is searched over the rounds a learner could send, not measured on a crawl.
 */

/**
 * The rate under which a bucket that refuses with no wait named may cost 3 refusals, req/s
 * (docs/rampup-bounds.md, "Refusals that name no wait"). At the family's fastest burst-1 bucket, the oracle
 * sends a short crawl's pages in pages / fastest seconds. A learner within 1.3× of that, refused at its
 * second request, has the other pages − 2 to send at least 1 / fastest apart: it retries within
 * (1.3 × pages − (pages − 2)) / fastest, 0.4 s. Every bucket slower than the inverse of that refuses the
 * retry too. Two of those, at r and a faster r′, answer alike while every gap is at least 1 / r, and at
 * gaps that long a learner within 1.3× at r′ needs r′ ≤ 1.3 × pages / (pages − 2) × r. So under the
 * rate returned here some slower bucket is refused a third time, or a faster one is crawled too slowly.
 */
export function bareThreshold(
    fastest: number = FAMILY_RANGES.rate[1],
    pages: number = FAMILY_RANGES.shortPages,
): number {
    const left = pages - 2;
    return retryThreshold(fastest, pages) * (left / (1.3 * pages));
}

/**
 * The rate under which a bucket that names no wait also refuses the retry a learner within 1.3× of the
 * family's fastest burst-1 bucket must send: the inverse of the 0.4 s {@link bareThreshold} derives.
 */
export function retryThreshold(
    fastest: number = FAMILY_RANGES.rate[1],
    pages: number = FAMILY_RANGES.shortPages,
): number {
    return fastest / (1.3 * pages - (pages - 2));
}

/**
 * Refusals a bucket of `rate` that names no wait costs after the round where its burst ran out,
 * whatever the learner does: the retry, under {@link retryThreshold}, and a gap too short, under
 * {@link bareThreshold} ("Refusals that name no wait").
 */
export function bareForced(rate: number): number {
    return (rate < retryThreshold() ? 1 : 0) + (rate < bareThreshold() ? 1 : 0);
}

/**
 * Refusals a learner may take in the round where a site's burst runs out, at a site that answers as
 * slowly as a concurrency limit of the family: two, as a learner within 1.3× of the least possible at a
 * server of two workers sends pairs early in a short crawl, and a site whose burst ends at a pair
 * refuses both ("Two in flight when a burst runs out"). Elsewhere one.
 */
export const PAIR_REFUSALS = 2;

/** The token buckets an adversary may pick from: B5's ranges of burst, rate and answer time. */
export interface BucketFamily {
    burst: readonly [number, number];
    rate: readonly [number, number];
    latencyMs: readonly [number, number];
}

/** B5's token buckets (family-mixes.ts). */
const B5_BUCKETS: BucketFamily = {
    burst: FAMILY_RANGES.burst,
    rate: FAMILY_RANGES.rate,
    latencyMs: FAMILY_RANGES.latencyMs,
};

// Bounds already searched for B5's buckets: a run judges each concurrency site once per goal line.
const searched = new Map<string, number>();

/** Rates of the family are tried this far apart: a coarser grid tries fewer buckets, so it can only lower the bound. */
const RATE_STEP = 0.05;

/** Schedules searched before the bound gives up and answers the doubling bound alone, which is lower and still holds. */
const SEARCH_BUDGET = 200_000;

// Token counts are sums of fractions: read them whole within this, as the bucket would.
const EPSILON = 1e-9;

interface Bucket {
    burst: number;
    // Tokens it gains in one round, the site's answer time.
    refill: number;
}

/** Rounds of one answer time each that a learner holding `cap` in flight from the start takes. */
function rounds(pages: number, cap: number): number {
    return Math.ceil(pages / cap);
}

/** Rounds to send `pages` starting at one request in flight and doubling each round, up to `cap`. */
function doublingRounds(pages: number, cap: number): number {
    let n = 0;
    for (let sent = 0; sent < pages; n++) sent += Math.min(2 ** n, cap);
    return n;
}

/**
 * Rounds to the last answer of a learner that starts at one request in flight and at most doubles
 * them each round trip, up to `workers`, over the rounds of one that holds `workers` from the start:
 * the least makespan ÷ oracle on a concurrency limit it has to find ("Short crawls of a concurrency
 * limit"). A learner cannot start higher (two sent together at first contact are refused by a cap of
 * 1) nor grow faster (it needs a round's answers to see a queue).
 */
export function doublingRatio(workers: number, pages: number): number {
    const cap = Math.max(1, Math.floor(workers));
    if (pages <= 0) return 1;
    return doublingRounds(pages, cap) / rounds(pages, cap);
}

/**
 * Rounds to the last answer of the fastest learner that starts at one request in flight, at most
 * doubles them each round, and at no round sends more than a bucket of `family` could refuse within its
 * allowance, where that bucket has answered every request so far (so the learner cannot have told it
 * from the site), over the rounds of one that holds `workers` from the start. A round lasts the site's
 * answer time `unloadedMs`: no answer comes sooner. Refusals are counted leniently, with the tokens the
 * bucket gains during the round credited, so the bound is never above the truth. Where no bucket of
 * the family answers as slowly as the site, only the doubling bound holds.
 */
export function allowanceRatio(workers: number, pages: number, unloadedMs: number, family = B5_BUCKETS): number {
    const cap = Math.max(1, Math.floor(workers));
    if (pages <= 0) return 1;
    const key = `${cap} ${pages} ${unloadedMs}`;
    const known = family === B5_BUCKETS ? searched.get(key) : undefined;
    if (known !== undefined) return known;
    const [fastest, slowest] = family.latencyMs;
    const buckets = unloadedMs >= fastest && unloadedMs <= slowest ? bucketsOf(family, unloadedMs) : [];
    const ratio = new ScheduleSearch(buckets, cap, pages).least() / rounds(pages, cap);
    if (family === B5_BUCKETS) searched.set(key, ratio);
    return ratio;
}

/** Every bucket of `family`'s grid: each burst, at rates {@link RATE_STEP} apart (twin-forced.ts tries the same). */
export function familyGrid(
    family: Pick<BucketFamily, 'burst' | 'rate'> = B5_BUCKETS,
): { rate: number; burst: number }[] {
    const out: { rate: number; burst: number }[] = [];
    const [lowRate, highRate] = family.rate;
    for (let burst = family.burst[0]; burst <= family.burst[1]; burst++) {
        for (let i = 0; lowRate + i * RATE_STEP <= highRate + EPSILON; i++)
            out.push({ rate: lowRate + i * RATE_STEP, burst });
    }
    return out;
}

function bucketsOf(family: BucketFamily, roundMs: number): Bucket[] {
    return familyGrid(family).map(({ rate, burst }) => ({ burst, refill: (rate * roundMs) / 1000 }));
}

/** A branch-and-bound search over the in-flight counts of each round; a bucket's tokens are -1 once it refused. */
class ScheduleSearch {
    // The fewest rounds found so far to send every page.
    private best = Number.POSITIVE_INFINITY;
    // Schedules tried: past the budget the search answers the doubling bound.
    private tried = 0;

    constructor(
        private readonly buckets: readonly Bucket[],
        private readonly cap: number,
        private readonly pages: number,
    ) {}

    least(): number {
        this.visit(
            Float64Array.from(this.buckets, (b) => b.burst),
            0,
            0,
            0,
        );
        // One request a round costs no bucket more than its allowance, so a search within budget ends.
        return this.tried > SEARCH_BUDGET ? doublingRounds(this.pages, this.cap) : this.best;
    }

    private visit(tokens: Float64Array, sent: number, last: number, round: number): void {
        if (++this.tried > SEARCH_BUDGET) return;
        if (sent >= this.pages) {
            this.best = Math.min(this.best, round);
            return;
        }
        // Even at the cap from here, no better than the best found.
        if (round + Math.ceil((this.pages - sent) / this.cap) >= this.best) return;
        const top = Math.min(this.cap, last === 0 ? 1 : last * 2);
        for (let inFlight = top; inFlight >= 1; inFlight--) {
            if (!this.withinAllowance(tokens, inFlight)) continue;
            this.visit(this.afterRound(tokens, inFlight), sent + inFlight, inFlight, round + 1);
        }
    }

    /** Whether every bucket still answering like the site would refuse no more than it allows. */
    private withinAllowance(tokens: Float64Array, inFlight: number): boolean {
        return this.buckets.every(
            (b, i) => tokens[i] < 0 || inFlight - Math.floor(tokens[i] + b.refill + EPSILON) <= PAIR_REFUSALS,
        );
    }

    /** Each bucket's tokens after a round of `inFlight`: -1 where it refused (the learner would know it then). */
    private afterRound(tokens: Float64Array, inFlight: number): Float64Array {
        return tokens.map((t, i) => {
            if (t < 0 || inFlight > Math.floor(t + EPSILON)) return -1;
            return Math.min(this.buckets[i].burst, t - inFlight + this.buckets[i].refill);
        });
    }
}
