import { parseRetryAfter } from '../response/retry-after';
import type { RobotsReadFailure } from './robots-crawl-delay';

/**
 * What to do about a robots.txt read that failed (a 5xx, a 429, no answer):
 * - `retry`: pause the origin (back its key off, for `Retry-After` when the answer had one) and read again;
 * - `disallow`: the retries are spent and no earlier read is known: RFC 9309 §2.3.1.4's complete
 *   disallow, for `forMs`;
 * - `keepLastGood`: the retries are spent, but an earlier read got the file: RFC 9309 §2.4 lets a
 *   crawler keep using it while robots.txt is unreachable;
 * - `allow`: the retries are spent and disallowing is switched off (`robotsUnreachableDisallowSecs: 0`);
 * - `errorBudget`: reads that got no answer spent the domain's error budget (`maxConsecutiveErrors`):
 *   the host is down, and its requests fail with `DomainUnreachableError` as for page requests.
 */
export type RobotsFailureAction =
    | { action: 'errorBudget' }
    | { action: 'retry'; waitMs?: number }
    | { action: 'disallow'; forMs: number }
    | { action: 'keepLastGood' }
    | { action: 'allow' };

/** What the decision needs besides the failure. */
export interface RobotsFailureContext {
    /** Reads of this origin's robots.txt still allowed after this one (`maxRobotsRetries` minus those made). */
    retriesLeft: number;
    /** An earlier read of the origin got its file (or a 4xx). */
    hasGoodRead: boolean;
    /** `robotsUnreachableDisallowSecs` in ms; 0 turns disallowing off. */
    disallowMs: number;
    /** The domain has had `maxConsecutiveErrors` network errors in a row, this read's included. */
    errorBudgetSpent: boolean;
    now: number;
}

/** Decides what a failed robots.txt read leads to. Pure: the same inputs give the same answer. */
export function decideRobotsFailure(failure: RobotsReadFailure, context: RobotsFailureContext): RobotsFailureAction {
    if (context.errorBudgetSpent) return { action: 'errorBudget' };
    if (context.retriesLeft > 0) {
        const waitMs = parseRetryAfter(failure.retryAfterHeader, context.now);
        return waitMs === undefined ? { action: 'retry' } : { action: 'retry', waitMs };
    }
    if (context.hasGoodRead) return { action: 'keepLastGood' };
    if (context.disallowMs > 0) return { action: 'disallow', forMs: context.disallowMs };
    return { action: 'allow' };
}
