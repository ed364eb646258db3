import type { IRequestManager } from '@crawlee/core';

import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { PacingSignal } from '../pacing/pacing-signal';
import type { NavigationContext } from '../orchestration/response-interpreter';
import type { DomainStatistics } from '../readiness/statistics';
import type { DomainGate, DomainGateOptions } from '../robots/origin-gate';

/**
 * What the crawler integration needs of a throttler: the manager implements it, and the integration
 * depends on nothing else, so the two do not import each other.
 */
export interface ThrottlerPort extends IRequestManager {
    readonly options: ResolvedThrottlingOptions;
    /** Per-domain statistics (the free retries are summed into Crawlee's statistics). */
    stats(): readonly DomainStatistics[];
    /** Records that responses reach the throttler. */
    markIntegrated(): void;
    handleResponse(context: NavigationContext, response: unknown): Promise<void>;
    /** Throws `DomainUnreachableError` when the request's domain spent its error budget. */
    checkReachable(context: NavigationContext): void;
    /** Calls `listener` whenever held-back work becomes ready; returns an unsubscribe. */
    onWake(listener: () => void): () => void;
    setDomainGate(gate: DomainGate | undefined, options?: DomainGateOptions): void;
    recordPacingSignal(signal: PacingSignal): boolean;
    /** Skips (or, with undefined, stops skipping) the domain of `url` for its robots.txt crawl delay. */
    skipForCrawlDelay(url: string, declaredSecs: number | undefined): void;
    /** A robots.txt read got an answer or none (counted in the error budget); true when the budget is spent. */
    noteRobotsRead(url: string, answered: boolean): boolean;
    /**
     * Holds the domain of `url` before its robots.txt is read again (a 5xx or 429 answer): for
     * `waitMs` (Retry-After) or the backoff step after `retriesMade` retries. Not a page refusal.
     */
    pauseForRobots(url: string, waitMs: number | undefined, retriesMade: number): void;
}
