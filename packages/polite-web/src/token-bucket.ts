// Float refills such as 3 × (1/3 s) land a hair under a whole token; treat that as whole.
const EPSILON = 1e-9;

/**
 * A token bucket driven by an external clock, so tests can advance time by hand.
 * Starts full: a fresh site accepts a burst straight away, as real rate limiters do.
 */
export class TokenBucket {
    private tokens: number;
    private lastRefillAt: number;

    constructor(
        /** Tokens added per second. */
        readonly rate: number,
        /** Capacity. */
        readonly burst: number,
        now: number,
    ) {
        this.tokens = burst;
        this.lastRefillAt = now;
    }

    /** Takes one token if available. */
    tryTake(now: number): boolean {
        this.refill(now);
        if (this.tokens < 1 - EPSILON) return false;
        this.tokens = Math.max(0, this.tokens - 1);
        return true;
    }

    /** Whole tokens available now. */
    remaining(now: number): number {
        this.refill(now);
        return Math.floor(this.tokens + EPSILON);
    }

    /** Milliseconds until one token is available (0 if one is). */
    msUntilToken(now: number): number {
        this.refill(now);
        return this.tokens >= 1 - EPSILON ? 0 : ((1 - this.tokens) / this.rate) * 1000;
    }

    /** Milliseconds until the bucket is full again, i.e. the whole quota has reset. */
    msUntilFull(now: number): number {
        this.refill(now);
        return this.tokens >= this.burst - EPSILON ? 0 : ((this.burst - this.tokens) / this.rate) * 1000;
    }

    /** Refills to capacity, as after a long quiet period. */
    reset(now: number): void {
        this.tokens = this.burst;
        this.lastRefillAt = now;
    }

    private refill(now: number): void {
        // A clock that steps backwards (tests, NTP) must not drain or overfill the bucket.
        if (now <= this.lastRefillAt) return;
        this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastRefillAt) / 1000) * this.rate);
        this.lastRefillAt = now;
    }
}
