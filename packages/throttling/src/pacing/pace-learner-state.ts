/**
 * What a scope's pace learner knows, as it is persisted and inspected: the pace, the slots, the
 * response times and the window being measured, each a part that owns its fields. The learning
 * (pace-learner.ts) reads and moves them; the few moves that touch the slots and the window alone
 * (an announced quota, a refusal inside a backoff, a new window) are here. Callers read the numbers
 * here, and a restore sets the persisted ones (adaptive-data.ts). Rates are requests per second;
 * times ms.
 */
import type { RampupPolicy } from './rampup-policy';
import { RAMPUP_DEFAULTS } from './rampup-policy';
import { ResponseTimes } from './response-times';
import { adaptiveData } from './adaptive-data';
import type { AdaptiveData } from './adaptive-data';
import { LearnedPace } from './learned-pace';
import { LearnedSlots } from './learned-slots';
import { MeasuringWindow } from './measuring-window';
import { PERIOD_MS } from './pace-learner-constants';

export abstract class PaceLearnerState implements AdaptiveData {
    readonly kind = 'adaptive';
    // The pace asked for, the safe and the last quiet one, and the refused bound above them.
    protected readonly pace: LearnedPace;
    // How many requests may be in flight: learned from queueing, refusals and announced quotas.
    protected readonly slots = new LearnedSlots();
    // Response times: the least one (unloaded) and this window's.
    protected readonly times = new ResponseTimes(PERIOD_MS);
    // The current measuring window.
    protected readonly window = new MeasuringWindow();
    // The policy of the last dispatch (answers come without one): the slot cap and the pace bounds.
    protected policy: RampupPolicy = RAMPUP_DEFAULTS;

    protected constructor(initialRate: number) {
        this.pace = new LearnedPace(initialRate);
    }

    /** Current pace, requests per second (Infinity: unpaced). */
    get rate(): number {
        return this.pace.rate;
    }

    set rate(rate: number) {
        this.pace.rate = rate;
    }

    /** The pace learned to be safe: the last quiet or estimated one; 0 while unknown. */
    get safeRate(): number {
        return this.pace.safeRate;
    }

    set safeRate(rate: number) {
        this.pace.safeRate = rate;
    }

    /** Slots on top of one. */
    get extraConcurrency(): number {
        return this.slots.extra;
    }

    set extraConcurrency(n: number) {
        this.slots.extra = n;
    }

    /** The slots of the last window that saw no queue (persisted; a resumed crawl starts there). */
    get safeExtraConcurrency(): number {
        return this.slots.safeExtra;
    }

    set safeExtraConcurrency(n: number) {
        this.slots.safeExtra = n;
    }

    /** Slots on top of one in force now: the learned ones, within the quota the site last announced. */
    get allowedExtraConcurrency(): number {
        return this.slots.allowedExtra;
    }

    /** The lowest pace refused (or queued at) since the last relaxing; Infinity when none. */
    get unsafeRate(): number {
        return this.pace.bound.rate;
    }

    set unsafeRate(rate: number) {
        this.pace.bound.rate = rate;
    }

    /** A typical answer without a queue (the median of the last window that showed none), ms (Infinity before any answer). */
    get typicalResponseMs(): number {
        return this.times.typicalMs;
    }

    /** The delay between dispatches asked for, ms (0 while unpaced). */
    delayMs(): number {
        return Number.isFinite(this.rate) ? 1000 / this.rate : 0;
    }

    /** In this window the scope had work and a clock allowing it, but every slot was busy. */
    get slotBoundInWindow(): boolean {
        return this.window.slotBound;
    }

    set slotBoundInWindow(bound: boolean) {
        this.window.slotBound = bound;
    }

    /**
     * The site announced `remaining` requests left in its quota (RateLimit headers): no more slots
     * than that, or the requests in flight beyond it would be refused. The learned slots stay: the
     * next announcement (a new window's) lifts the cap.
     */
    onQuotaLeft(remaining: number): void {
        this.slots.onQuotaLeft(remaining);
    }

    /**
     * A refusal inside a backoff another one started (a burst of requests in flight refused together):
     * nothing new of the pace, but the slots come down to those in flight below it, as at the first.
     * A cap refuses at once, before the accepted requests are answered: the last of the burst sees
     * the cap's own count in flight.
     */
    onRefusedInBackoff(now: number, inFlight: number): void {
        this.slots.onRefusedInBackoff(now, inFlight, this.policy.maxConcurrency);
    }

    /** A new measuring window starts at `now`: the slots and the response times start theirs. */
    protected startWindow(now: number): void {
        this.window.begin(now);
        this.slots.newWindow();
        this.times.newWindow();
    }

    toJSON(): AdaptiveData {
        return adaptiveData(this);
    }
}
