/**
 * The pacing state of one throttled domain: two clocks and the bookkeeping behind them.
 *
 * - The crawl-delay clock is armed on every dispatch: the next request may leave no sooner than
 *   `interval` after the previous one, where interval = max(robots.txt crawl delay, floor).
 * - The backoff clock is armed by a refusal (429 and friends): nothing leaves before it runs out.
 *
 * A domain is ready when both clocks have passed. Every decision takes `now` (epoch ms) as an
 * argument, so it is a pure function of the state and the time; nothing here reads a clock.
 * All fields are plain numbers in epoch milliseconds so the state can be persisted as JSON and
 * restored by another process.
 */

/** Exponent cap: 2^20 × base is far beyond any sane cap, and keeps the arithmetic finite. */
export const MAX_BACKOFF_EXPONENT = 20;

/**
 * Slack allowed between a backoff's end and the next refusal when measuring stall time: the
 * crawler needs a moment to send the next request (pool polling, latency). Gaps longer than the
 * imposed wait plus this slack are idle time or crawl delay and do not count as stalling.
 */
export const STALL_DISPATCH_SLACK_MS = 2_000;

/** The serialisable part of a domain's state (what is persisted and restored). */
export interface DomainStateData {
    domain: string;
    /** Crawl delay declared for the domain (robots.txt `Crawl-delay`), in ms; 0 when none. */
    crawlDelayMs: number;
    /** Crawl-delay clock: earliest time of the next dispatch. */
    nextDispatchAt: number;
    /** Backoff clock: no dispatch before this time. 0 when never backed off. */
    backoffUntil: number;
    /** How many escalations since the last decay; the next exponential wait is base × 2^exponent. */
    backoffExponent: number;
    /** The wait imposed by the last escalation, in ms. */
    lastBackoffMs: number;
    /** After this time without a new refusal the exponent starts over. 0 when nothing to decay. */
    decayAt: number;
    /** Start of the current unbroken run of refusals; 0 when the domain is not refusing. */
    refusingSince: number;
    /** Time of the last refusal; 0 when none. */
    lastRefusalAt: number;
    /** Refusing time accumulated in the current run (idle time and crawl delay excluded). */
    stallMs: number;
    /** The wait imposed at the last refusal (remaining backoff at that moment), in ms. */
    lastImposedMs: number;
    /** Counters for users and reports. */
    dispatched: number;
    refusals: number;
    handled: number;
}

/** What a rate-limit signal did to the backoff clock. */
export interface RateLimitOutcome {
    /** False when the refusal arrived while the backoff clock was already running (a burst). */
    escalated: boolean;
    /** The wait now in force, in ms from the refusal. */
    waitMs: number;
    /** Set when the wait was cut to `maxDelayMs`: which source asked for more. */
    cappedFrom?: { source: 'retry-after' | 'exponential'; requestedMs: number };
}

/** Parameters of the backoff, resolved from the options. */
export interface BackoffPolicy {
    baseDelayMs: number;
    maxDelayMs: number;
}

/** Undo token of a dispatch, for a fetch that turned out to have nothing to hand out. */
export interface DispatchReservation {
    readonly previousNextDispatchAt: number;
    readonly armedNextDispatchAt: number;
}

export class DomainState implements DomainStateData {
    domain: string;
    crawlDelayMs = 0;
    nextDispatchAt = 0;
    backoffUntil = 0;
    backoffExponent = 0;
    lastBackoffMs = 0;
    decayAt = 0;
    refusingSince = 0;
    lastRefusalAt = 0;
    stallMs = 0;
    lastImposedMs = 0;
    dispatched = 0;
    refusals = 0;
    handled = 0;

    constructor(domain: string) {
        this.domain = domain;
    }

    /** Minimum spacing between dispatches: the larger of the domain's crawl delay and the floor. */
    intervalMs(floorMs: number): number {
        return Math.max(this.crawlDelayMs, floorMs);
    }

    /** Earliest time both clocks allow a dispatch. */
    readyAt(): number {
        return Math.max(this.nextDispatchAt, this.backoffUntil);
    }

    isReady(now: number): boolean {
        return now >= this.readyAt();
    }

    isBackingOff(now: number): boolean {
        return now < this.backoffUntil;
    }

    /** Arms the crawl-delay clock for a dispatch at `now`. Call before awaiting the queue. */
    dispatch(now: number, floorMs: number): DispatchReservation {
        const reservation = { previousNextDispatchAt: this.nextDispatchAt, armedNextDispatchAt: now + this.intervalMs(floorMs) };
        this.nextDispatchAt = reservation.armedNextDispatchAt;
        this.dispatched += 1;
        return reservation;
    }

    /** Gives a reserved window back when the queue had nothing to hand out. */
    cancelDispatch(reservation: DispatchReservation): void {
        // Only roll back if no later dispatch re-armed the clock in the meantime.
        if (this.nextDispatchAt === reservation.armedNextDispatchAt) this.nextDispatchAt = reservation.previousNextDispatchAt;
        this.dispatched -= 1;
    }

    /** Raises the declared crawl delay (robots.txt); a later, smaller value never lowers it. */
    setCrawlDelay(ms: number): boolean {
        if (!(ms > this.crawlDelayMs)) return false;
        this.crawlDelayMs = ms;
        return true;
    }

    /** The exponent that the next escalation starts from, after any decay due by `now`. */
    effectiveExponent(now: number): number {
        return this.decayAt !== 0 && now >= this.decayAt ? 0 : this.backoffExponent;
    }

    /**
     * Records a refusal. While the backoff clock runs, a refusal does not escalate (a burst of
     * in-flight requests all refused counts once); a server-given wait may still extend the clock.
     */
    recordRateLimit(now: number, waitMs: number | undefined, policy: BackoffPolicy): RateLimitOutcome {
        this.refusals += 1;
        let outcome: RateLimitOutcome;
        if (this.isBackingOff(now)) {
            if (waitMs !== undefined && waitMs > 0) {
                const capped = Math.min(waitMs, policy.maxDelayMs);
                this.backoffUntil = Math.max(this.backoffUntil, now + capped);
            }
            outcome = { escalated: false, waitMs: this.backoffUntil - now };
        } else {
            const exponent = Math.min(this.effectiveExponent(now) + 1, MAX_BACKOFF_EXPONENT);
            const exponentialMs = policy.baseDelayMs * 2 ** (exponent - 1);
            const useHeader = waitMs !== undefined && waitMs > 0;
            const requestedMs = useHeader ? waitMs : exponentialMs;
            const delayMs = Math.min(requestedMs, policy.maxDelayMs);
            this.backoffExponent = exponent;
            this.lastBackoffMs = delayMs;
            this.backoffUntil = now + delayMs;
            // The quiet period is measured from when the domain can be dispatched again (a longer
            // crawl delay included); measured from the backoff end it would lapse before the retry.
            this.decayAt = Math.max(this.backoffUntil, this.nextDispatchAt) + delayMs;
            outcome = { escalated: true, waitMs: delayMs };
            if (requestedMs > policy.maxDelayMs) {
                outcome.cappedFrom = { source: useHeader ? 'retry-after' : 'exponential', requestedMs };
            }
        }
        this.accumulateStall(now);
        return outcome;
    }

    private accumulateStall(now: number): void {
        if (this.refusingSince === 0) {
            this.refusingSince = now;
            this.stallMs = 0;
        } else {
            const gap = Math.max(0, now - this.lastRefusalAt);
            this.stallMs += Math.min(gap, this.lastImposedMs + STALL_DISPATCH_SLACK_MS);
        }
        this.lastRefusalAt = now;
        this.lastImposedMs = Math.max(0, this.backoffUntil - now);
    }

    /** A request of the domain was answered without a refusal: the run of refusals is broken. */
    recordSuccess(): void {
        this.handled += 1;
        this.refusingSince = 0;
        this.stallMs = 0;
        this.lastImposedMs = 0;
    }

    /**
     * How long the domain has been refusing without a break at `now` (0 when it is not refusing):
     * the accumulated refusing time plus the part of the wait imposed by the last refusal that has
     * already passed.
     */
    stalledForMs(now: number): number {
        if (this.refusingSince === 0) return 0;
        const sinceLast = Math.max(0, now - this.lastRefusalAt);
        return this.stallMs + Math.min(sinceLast, this.lastImposedMs);
    }

    toJSON(): DomainStateData {
        const { domain, crawlDelayMs, nextDispatchAt, backoffUntil, backoffExponent, lastBackoffMs, decayAt } = this;
        const { refusingSince, lastRefusalAt, stallMs, lastImposedMs, dispatched, refusals, handled } = this;
        return {
            domain,
            crawlDelayMs,
            nextDispatchAt,
            backoffUntil,
            backoffExponent,
            lastBackoffMs,
            decayAt,
            refusingSince,
            lastRefusalAt,
            stallMs,
            lastImposedMs,
            dispatched,
            refusals,
            handled,
        };
    }

    /** Rebuilds a state from persisted data; returns undefined when the data has the wrong shape. */
    static fromJSON(data: unknown): DomainState | undefined {
        if (typeof data !== 'object' || data === null) return undefined;
        const record = data as Record<string, unknown>;
        if (typeof record.domain !== 'string' || record.domain === '') return undefined;
        const state = new DomainState(record.domain);
        for (const key of NUMERIC_FIELDS) {
            const value = record[key];
            if (value === undefined) continue;
            if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
            state[key] = value;
        }
        state.backoffExponent = Math.min(state.backoffExponent, MAX_BACKOFF_EXPONENT);
        return state;
    }
}

const NUMERIC_FIELDS = [
    'crawlDelayMs',
    'nextDispatchAt',
    'backoffUntil',
    'backoffExponent',
    'lastBackoffMs',
    'decayAt',
    'refusingSince',
    'lastRefusalAt',
    'stallMs',
    'lastImposedMs',
    'dispatched',
    'refusals',
    'handled',
] as const satisfies readonly (keyof DomainStateData)[];
