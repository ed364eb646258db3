/**
 * Adaptive rampup: searches for the highest rate a scope tolerates, per window.
 *
 * The search keeps two bounds on the dispatch rate: `safeRate`, the highest rate that lived through
 * a whole window with fewer backoff triggers than the target, and `unsafeRate`, the lowest rate that
 * drew more. Without an upper bound the rate doubles per quiet window (slow start); with both, the
 * next rate is a step from the safe bound a quarter of the way towards the unsafe one (biased low, so
 * probing costs few refusals). A trigger sends the rate back to the last safe one at once. When the
 * bounds are within `convergedRatio`, the rate holds at the safe bound; every `reprobeWindows` quiet
 * windows the unsafe bound is relaxed so a server that became faster is noticed.
 *
 * Rates are requests per second; all times epoch ms. Decisions take `now` and read no clock.
 */

import { clamp, isCount, storedRate } from './rate-values';

/** Settings of the rampup search, resolved. */
export interface RampupPolicy {
    /**
     * `adaptive`: learn the rate from accepted answers (adaptive-pacer.ts); `search`: the bracketed
     * rate search of this file (the algorithm of earlier releases).
     */
    algorithm: 'adaptive' | 'search';
    /** Triggers per window to aim below: `[low, high]`; inside the range the rate holds. */
    backoffTarget: readonly [number, number];
    /** Least length of a window, ms. */
    windowMs: number;
    /** Least dispatches in a window before it can count as quiet. */
    minWindowDispatches: number;
    /**
     * Rate to start from (requests per second). Infinity: no pacing until the first trigger, then
     * slow start from the rate that got through before it (at least 1 request per second).
     */
    initialRate: number;
    /** Bounds of the search (requests per second). */
    minRate: number;
    maxRate: number;
    /** Fraction of the gap between the bounds a quiet window probes upwards. */
    probeStep: number;
    /** Stop probing when unsafe / safe is within this ratio. */
    convergedRatio: number;
    /** Quiet windows at the converged rate before the unsafe bound is relaxed. */
    reprobeWindows: number;
    /** Most concurrency the search may reach by adding slots. */
    maxConcurrency: number;
}

export const RAMPUP_DEFAULTS: RampupPolicy = {
    algorithm: 'search',
    backoffTarget: [1, 1],
    windowMs: 1_500,
    minWindowDispatches: 2,
    initialRate: Number.POSITIVE_INFINITY,
    minRate: 0.01,
    maxRate: 1_000,
    probeStep: 1 / 6,
    convergedRatio: 1.2,
    reprobeWindows: 10,
    maxConcurrency: 8,
};

/** The serialisable state of one scope's search. */
export interface RampupData {
    rate: number;
    safeRate: number;
    unsafeRate: number;
    windowStart: number;
    windowDispatches: number;
    windowTriggers: number;
    quietAtConverged: number;
    extraConcurrency?: number;
    safeExtraConcurrency?: number;
}

export class RampupState implements RampupData {
    /** Current target rate, requests per second. */
    rate: number;
    /** Highest rate that lived through a quiet window; 0 when none yet. */
    safeRate = 0;
    /** Lowest rate that drew too many triggers; Infinity when none yet. */
    unsafeRate = Number.POSITIVE_INFINITY;
    /** Start of the current window; -1 before the first dispatch. */
    windowStart = -1;
    windowDispatches = 0;
    windowTriggers = 0;
    quietAtConverged = 0;
    /** Slots added on top of the configured concurrency, and the count last seen safe. */
    extraConcurrency = 0;
    safeExtraConcurrency = 0;
    /** In this window the scope had work and a clock allowing it, but every slot was busy. */
    slotBoundInWindow = false;
    /** Dispatches since the start, while no trigger has been seen yet (the first stretch). */
    firstStretchDispatches = 0;
    firstStretchStart = 0;

    constructor(policy: RampupPolicy) {
        this.rate = policy.initialRate;
    }

    /** The delay between dispatches the search asks for, ms (0 while unpaced). */
    delayMs(): number {
        return Number.isFinite(this.rate) ? 1000 / this.rate : 0;
    }

    /** Counts a dispatch; closes the window when it is due. */
    onDispatch(now: number, policy: RampupPolicy, _backlog?: number): void {
        if (!Number.isFinite(this.rate)) {
            if (this.firstStretchStart === 0) this.firstStretchStart = now;
            this.firstStretchDispatches += 1;
        }
        if (this.windowStart < 0) this.windowStart = now;
        this.windowDispatches += 1;
        this.maybeCloseWindow(now, policy);
    }

    /**
     * A backoff trigger at `now`: above the target the rate drops back to the last safe one (or
     * halves when none is known yet), and the window restarts.
     */
    onTrigger(now: number, policy: RampupPolicy, _waitMs?: number, _serverGiven?: boolean): void {
        if (!Number.isFinite(this.rate)) {
            // Unpaced until now: start slowly from what got through before the first refusal.
            const seconds = Math.max(1, (now - this.firstStretchStart) / 1000);
            this.rate = clamp(Math.max(1, (this.firstStretchDispatches - 1) / seconds), policy);
            this.startWindow(now);
            return;
        }
        this.windowTriggers += 1;
        // Inside the target range the window may still end quiet enough; past it, act now.
        if (this.windowTriggers < Math.max(1, policy.backoffTarget[1])) return;
        this.extraConcurrency = Math.min(this.extraConcurrency, this.safeExtraConcurrency);
        this.unsafeRate = Math.min(this.unsafeRate, this.rate);
        // A rate that looked safe was not (a burst allowance hid the excess): trust a little less.
        if (this.safeRate >= this.unsafeRate) this.safeRate = this.unsafeRate * 0.85;
        this.rate = clamp(this.safeRate > 0 ? this.safeRate : this.rate / 2, policy);
        this.quietAtConverged = 0;
        this.startWindow(now);
    }

    /** The search counts refusals only; answers teach it nothing. */
    onAnswer(_now?: number, _sentAt?: number): void {}

    /** Nor does an announced empty quota (the backoff clock holds the scope). */
    onExhausted(_now: number, _policy: RampupPolicy, _waitMs: number): void {}

    private maybeCloseWindow(now: number, policy: RampupPolicy): void {
        if (now - this.windowStart < policy.windowMs || this.windowDispatches < policy.minWindowDispatches) return;
        const [low] = policy.backoffTarget;
        if (this.windowTriggers < low && this.slotBoundInWindow && this.extraConcurrency < policy.maxConcurrency - 1) {
            // Quiet, but limited by slots rather than by pace (slow responses): add a slot first.
            this.safeExtraConcurrency = this.extraConcurrency;
            this.extraConcurrency += 1;
        } else if (!Number.isFinite(this.rate)) {
            // Unpaced and not held by slots: nothing to search until the first trigger.
        } else if (this.windowTriggers < low) {
            this.safeExtraConcurrency = this.extraConcurrency;
            this.safeRate = Math.max(this.safeRate, this.rate);
            if (!Number.isFinite(this.unsafeRate)) {
                this.rate = clamp(this.rate * 2, policy);
            } else if (this.unsafeRate / this.safeRate <= policy.convergedRatio) {
                this.rate = this.safeRate;
                if (++this.quietAtConverged >= policy.reprobeWindows) {
                    this.unsafeRate *= 1.5;
                    this.quietAtConverged = 0;
                }
            } else {
                this.rate = clamp(this.safeRate + (this.unsafeRate - this.safeRate) * policy.probeStep, policy);
            }
        }
        this.startWindow(now);
    }

    private startWindow(now: number): void {
        this.slotBoundInWindow = false;
        this.windowStart = now;
        this.windowDispatches = 0;
        this.windowTriggers = 0;
    }

    toJSON(): RampupData {
        const {
            safeRate,
            unsafeRate,
            windowStart,
            windowDispatches,
            windowTriggers,
            quietAtConverged,
            extraConcurrency,
            safeExtraConcurrency,
        } = this;
        const rate = Number.isFinite(this.rate) ? this.rate : -1;
        return {
            extraConcurrency,
            safeExtraConcurrency,
            rate,
            safeRate,
            unsafeRate: Number.isFinite(unsafeRate) ? unsafeRate : -1,
            windowStart,
            windowDispatches,
            windowTriggers,
            quietAtConverged,
        };
    }

    /**
     * Rebuilds a search from persisted data, or undefined when a field is missing or out of range.
     * Only the known fields are read, one by one: copying the record wholesale would let a stored
     * `__proto__` replace the prototype (and with it every method) and any other key (`delayMs`,
     * a string `extraConcurrency`) land on the instance.
     */
    static fromJSON(data: unknown, policy: RampupPolicy): RampupState | undefined {
        if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
        const d = data as Record<string, unknown>;
        const rate = storedRate(d.rate);
        const unsafeRate = storedRate(d.unsafeRate);
        const { safeRate, windowStart } = d;
        if (rate === undefined || unsafeRate === undefined) return undefined;
        if (typeof safeRate !== 'number' || !Number.isFinite(safeRate) || safeRate < 0) return undefined;
        // -1 marks "no window yet".
        if (typeof windowStart !== 'number' || !Number.isFinite(windowStart) || windowStart < -1) return undefined;
        const counts = REQUIRED_COUNTS.map((key) => d[key]);
        const extras = OPTIONAL_COUNTS.map((key) => d[key] ?? 0);
        if (![...counts, ...extras].every(isCount)) return undefined;
        const state = new RampupState(policy);
        state.rate = rate;
        state.unsafeRate = unsafeRate;
        state.safeRate = safeRate;
        state.windowStart = windowStart;
        [state.windowDispatches, state.windowTriggers, state.quietAtConverged] = counts as number[];
        [state.extraConcurrency, state.safeExtraConcurrency] = extras as number[];
        return state;
    }
}

const REQUIRED_COUNTS = ['windowDispatches', 'windowTriggers', 'quietAtConverged'] as const;
const OPTIONAL_COUNTS = ['extraConcurrency', 'safeExtraConcurrency'] as const;
