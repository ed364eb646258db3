import type { ResolvedPolicy } from '../pacing/policy';
import type { DomainState } from '../pacing/domain-state';
import type { DomainQueue } from '../core/domain-queue';
import type { OriginBooks } from '../robots/origin-books';
import type { Scheduler } from '../scheduling/scheduler';
import type { SharedClockSync } from '../shared-clock/shared-clock-sync';
import type { FrontierWindow } from './frontier-window';

/** What the owners of a domain's other state say of it: the window, the scheduler, the origin gate and the shared clock. */
export interface RestViews {
    window: Pick<FrontierWindow, 'waiting'>;
    scheduler: Pick<Scheduler, 'isFiled'>;
    origins: Pick<OriginBooks, 'atRest'>;
    shared: Pick<SharedClockSync, 'holdsLease'>;
}

/**
 * Whether a domain can be forgotten at `now` without changing how it would be paced: nothing of it
 * waits or runs (no queued or windowed request, no request in flight, no origin check due, running or
 * to be retried, no shared lease, no hold), and what it remembers says nothing a fresh domain would
 * not (every clock run out, no raised pacing or remembered backoff step, no refusal run or error
 * count, no announced pace, no quota spent in the current window, no skip for its crawl delay, no
 * origin blocked for an unreachable robots.txt, no retried robots.txt read). A forgotten domain met
 * again starts fresh and has its robots.txt read again. Reads only: a function of its arguments. The
 * table in docs/broad-crawls.md lists these rules one by one; keep the two in step.
 */
export function isAtRest(
    entry: DomainQueue,
    views: RestViews,
    state: DomainState | undefined,
    policy: ResolvedPolicy,
    now: number,
): boolean {
    if (entry.queued > 0 || views.window.waiting(entry) > 0 || views.scheduler.isFiled(entry)) return false;
    // A retried read counts towards the origin's retries in a row; a block fails its requests until it ends.
    if (!views.origins.atRest(entry, now)) return false;
    if (views.shared.holdsLease(entry) || entry.blockedUntil > now || (entry.opening && !entry.opened)) return false;
    if (!state) return true;
    return (
        state.inFlight === 0 &&
        state.nextDispatchAt <= now &&
        state.backoffUntil <= now &&
        state.backoff.decayAt <= now &&
        state.backoff.penaltyAt(now, policy) === 0 &&
        state.backoff.refusingSince === 0 &&
        state.limits.consecutiveErrors === 0 &&
        state.limits.excessiveCrawlDelaySecs === undefined &&
        state.backoff.announcedUntil <= now &&
        (!policy.quota || state.limits.spentAt(now, policy.quota.windowMs) === 0)
    );
}
