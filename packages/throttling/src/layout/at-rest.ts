import type { ResolvedPolicy } from '../options/policy';
import type { DomainState } from '../pacing/domain-state';
import type { DomainQueue } from '../queues/domain-queue';

/**
 * Whether a domain can be forgotten at `now` without changing how it would be paced: nothing of it
 * waits or runs (no queued or windowed request, no request in flight, no origin check, no shared
 * lease, no hold), and its state says nothing a fresh state would not (every clock run out, no
 * raised pacing or remembered backoff step, no refusal run or error count, no announced pace, no
 * quota spent in the current window, no skip for its crawl delay). A forgotten domain met again
 * starts fresh and has its robots.txt read again. Pure: a function of its arguments.
 */
export function isAtRest(
    entry: DomainQueue,
    state: DomainState | undefined,
    policy: ResolvedPolicy,
    now: number,
): boolean {
    if (entry.queued > 0 || (entry.windowed?.length ?? 0) > 0 || entry.scheduled !== undefined) return false;
    if (entry.gatesPending > 0 || entry.checksDue.size > 0 || entry.retryPending.size > 0) return false;
    if (entry.sharedLease !== undefined || entry.blockedUntil > now || (entry.opening && !entry.opened)) return false;
    if (!state) return true;
    return (
        state.inFlight === 0 &&
        state.nextDispatchAt <= now &&
        state.backoffUntil <= now &&
        state.decayAt <= now &&
        state.penaltyAt(now, policy) === 0 &&
        state.refusingSince === 0 &&
        state.consecutiveErrors === 0 &&
        state.excessiveCrawlDelaySecs === undefined &&
        state.announcedUntil <= now &&
        (!policy.quota || state.spentAt(now, policy.quota.windowMs) === 0)
    );
}
