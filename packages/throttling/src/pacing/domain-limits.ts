import type { ResolvedPolicy } from './policy';
import { QuotaReset } from './quota-reset';

type Quota = NonNullable<ResolvedPolicy['quota']>;

/**
 * The limits a scope runs into besides its pace: the request quota of the current window, the reset
 * of the quota the site announces, the error budget (network errors or timeouts in a row with no
 * answer in between), and the skip for a crawl delay above the maximum. A scope with no quota that
 * never erred, announced nothing and was never skipped has none: its `DomainState` makes one on the
 * first such event. Every decision takes `now`.
 */
export class DomainLimits {
    // Start of the current quota window, and the cost spent in it.
    private windowStart = 0;
    private spent = 0;
    // Network errors or timeouts in a row with no answer in between.
    private errorsInRow = 0;
    /**
     * The Crawl-delay (seconds) robots.txt asked for above `maxCrawlDelaySecs`, when the scope is
     * skipped for it (`onExcessiveCrawlDelay: 'skip'`). Not saved: robots.txt is read again on resume.
     */
    excessiveCrawlDelaySecs: number | undefined = undefined;
    // When the quota the site announces resets, narrowed over a window's answers (none: never announced).
    private announced: QuotaReset | undefined;

    get quotaWindowStart(): number {
        return this.windowStart;
    }

    get quotaSpent(): number {
        return this.spent;
    }

    get consecutiveErrors(): number {
        return this.errorsInRow;
    }

    /** Cost spent in the quota window containing `now`. */
    spentAt(now: number, windowMs: number): number {
        return Math.floor(now / windowMs) * windowMs === this.windowStart ? this.spent : 0;
    }

    /**
     * Whether the quota lets a request of `cost` go at `now`: always into an empty window (so one
     * oversized request still goes, alone), otherwise only if the spend stays within the quota.
     */
    quotaAllows(now: number, cost: number, quota: Quota): boolean {
        const spent = this.spentAt(now, quota.windowMs);
        return spent === 0 || spent + cost <= quota.limit;
    }

    /** Spends `cost` in the window containing `now`. */
    spend(now: number, cost: number, quota: Quota): void {
        const window = Math.floor(now / quota.windowMs) * quota.windowMs;
        if (window !== this.windowStart) {
            this.windowStart = window;
            this.spent = 0;
        }
        this.spent += cost;
    }

    /** Corrects the spend of a request dispatched at `dispatchedAt` (if its window is still open). */
    adjustSpend(dispatchedAt: number, delta: number, quota: Quota): void {
        if (Math.floor(dispatchedAt / quota.windowMs) * quota.windowMs !== this.windowStart) return;
        this.spent = Math.max(0, this.spent + delta);
    }

    /**
     * An answer at `now` to a request sent at `sentAt` announced `remaining` left and `resetMs` to the
     * reset: when the reset is at the latest, or undefined for a window a later request saw end.
     */
    announcedReset(now: number, sentAt: number | undefined, remaining: number, resetMs: number): number | undefined {
        this.announced ??= new QuotaReset();
        return this.announced.note(now, sentAt, remaining, resetMs);
    }

    /** The site refused a request: an announced reset is taken as each answer gives it from now on. */
    noteRefusal(): void {
        this.announced?.refused();
    }

    noteNetworkError(): void {
        this.errorsInRow += 1;
    }

    /** The scope answered at all (a refusal too): its run of network errors is over. */
    noteReachable(): void {
        this.errorsInRow = 0;
    }

    /** Whether the scope spent its error budget: `limit` network errors in a row (0: no budget). */
    isUnreachable(limit: number): boolean {
        return limit > 0 && this.errorsInRow >= limit;
    }

    /** Takes over a saved state's quota window and error run. */
    restore(quotaWindowStart: number, quotaSpent: number, consecutiveErrors: number): void {
        this.windowStart = quotaWindowStart;
        this.spent = quotaSpent;
        this.errorsInRow = consecutiveErrors;
    }
}

/** A scope's limits as its readers see them. */
export type LimitsReadings = Readonly<
    Pick<
        DomainLimits,
        | 'quotaWindowStart'
        | 'quotaSpent'
        | 'consecutiveErrors'
        | 'excessiveCrawlDelaySecs'
        | 'spentAt'
        | 'quotaAllows'
        | 'isUnreachable'
    >
>;

/** The limits of a scope that has none yet: nothing spent, no error, no skip. Frozen, as they are shared. */
export const NO_LIMITS: LimitsReadings = Object.freeze(new DomainLimits());

/** When the next quota window opens after `now`. */
export function nextQuotaWindow(now: number, quota: Quota): number {
    return (Math.floor(now / quota.windowMs) + 1) * quota.windowMs;
}
