import type { ResolvedPolicy } from '../pacing/policy';
import type { DomainState } from '../pacing/domain-state';

/** One domain's line in the statistics (`throttler.stats()` and the summary logged at the end). */
export interface DomainStatistics {
    readonly domain: string;
    /** Requests sent (dispatched). */
    readonly requests: number;
    /** Requests handled (a failed request counts once it is given up on). */
    readonly handled: number;
    /** Answers that asked us to slow down (429, 503, ...), and network errors or timeouts. */
    readonly refused: number;
    /** Time spent backed off in all, ms. */
    readonly backedOffMs: number;
    /** The rate a ramping scope found it can keep (requests per second); undefined without rampup. */
    readonly learnedRate?: number;
    /** robots.txt `Crawl-delay`, ms (0: none). */
    readonly crawlDelayMs: number;
    /** Requests sent back for a free retry after a refusal: Crawlee's retry counts leave them out. */
    readonly freeRetries: number;
}

/** The statistics line of one domain. Pure. */
export function statisticsOf(state: DomainState, policy: ResolvedPolicy): DomainStatistics {
    const learned = policy.rampup ? state.rampupState?.safeRate : undefined;
    return Object.freeze({
        domain: state.domain,
        requests: state.dispatched,
        handled: state.handled,
        refused: state.backoff.refusals,
        backedOffMs: state.backoff.backedOffMs,
        learnedRate: learned && learned > 0 ? learned : undefined,
        crawlDelayMs: state.crawlDelayMs,
        freeRetries: state.backoff.freeRetries,
    });
}

/** Lines of the end-of-crawl summary, in the style of Crawlee's "Final request statistics". */
export function formatStatistics(rows: readonly DomainStatistics[], maxRows = 20): string[] {
    const busiest = [...rows].sort((a, b) => b.requests - a.requests);
    const lines = busiest.slice(0, maxRows).map((r) => {
        const rate = r.learnedRate === undefined ? '' : `, learned ${r.learnedRate.toFixed(2)} req/s`;
        const delay = r.crawlDelayMs > 0 ? `, Crawl-delay ${r.crawlDelayMs / 1000} s` : '';
        return `${r.domain}: ${r.requests} requests, ${r.handled} handled, ${r.refused} refused, ${r.freeRetries} free retries, backed off ${(r.backedOffMs / 1000).toFixed(1)} s${rate}${delay}`;
    });
    if (busiest.length > maxRows)
        lines.push(`… and ${busiest.length - maxRows} more domains (throttler.stats() has them all)`);
    return lines;
}
