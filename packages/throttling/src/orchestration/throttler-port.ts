import type { Request } from '@crawlee/core';

import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { NavigationContext } from '../response/navigation-context';
import type { DomainStatistics } from '../readiness/statistics';
import type { DomainGate, DomainGateOptions } from '../robots/origin-gate';
import type { PacingSignal } from './scoped-signal';

/**
 * What the crawler integration needs of a throttler, beyond the manager it checks the crawler
 * takes requests from. `assemble` builds it over the collaborators and `attach()` hands it to the
 * integration, so neither the integration nor its tests need anything off the manager's public API.
 */
export interface ThrottlerPort {
    readonly options: ResolvedThrottlingOptions;
    /** Per-domain statistics (the free retries are summed into Crawlee's statistics). */
    stats(): readonly DomainStatistics[];
    /** Records that responses reach the throttler. */
    markIntegrated(): void;
    /** Checks one response of a request the throttler handed out (see the manager's `handleResponse`). */
    handleResponse(context: NavigationContext, response: unknown): Promise<void>;
    /** Throws `DomainUnreachableError` when the request's domain spent its error budget. */
    checkReachable(context: { request: Request }): void;
    /**
     * The request is about to be sent (the HTTP client's last hook): answers how many ms to hold it
     * so it reaches the site an interval after its domain's previous send; its interval counts from then.
     */
    departs(context: { request: Request }): number;
    /** Calls `listener` whenever held-back work becomes ready; returns an unsubscribe. */
    onWake(listener: () => void): () => void;
    /** Sets the check run per origin before its first dispatch (robots.txt), and again when stale. */
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
