import type { DomainState } from '../pacing/domain-state';
import type { ResolvedPolicy } from '../pacing/policy';
import { concurrencyLimit, interval, isReady, readyAt } from '../pacing/readiness-decision';
import type { DomainSnapshot } from './readiness';

/**
 * One domain's snapshot: its clocks, slots, pacing and counters at `now`, frozen. Pure: everything
 * it shows comes from the arguments.
 */
export function snapshotOf(
    state: DomainState,
    policy: ResolvedPolicy,
    queued: number,
    floorMs: number,
    now: number,
): DomainSnapshot {
    const pace = interval(state, now, floorMs, policy);
    const ramp = state.rampupState;
    const quota = policy.quota;
    return Object.freeze({
        domain: state.domain,
        scope: policy.scopeKey,
        ready: isReady(state, now, policy),
        readyAt: readyAt(state, now, policy),
        crawlDelayMs: state.crawlDelayMs,
        intervalMs: pace.ms,
        intervalReason: pace.reason,
        concurrencyLimit: concurrencyLimit(state, policy),
        penaltyMs: state.backoff.penaltyAt(now, policy),
        rampup: ramp ? { rate: ramp.rate, safeRate: ramp.safeRate, unsafeRate: ramp.unsafeRate } : undefined,
        quota: quota
            ? { limit: quota.limit, windowMs: quota.windowMs, spent: state.limits.spentAt(now, quota.windowMs) }
            : undefined,
        nextDispatchAt: state.nextDispatchAt,
        backoffUntil: state.backoffUntil,
        backingOff: state.backoff.isBackingOff(now),
        backoffExponent: state.backoff.effectiveExponent(now),
        decayAt: state.backoff.decayAt,
        stalledForMs: state.backoff.stalledForMs(now),
        refusals: state.backoff.refusals,
        consecutiveErrors: state.limits.consecutiveErrors,
        dispatched: state.dispatched,
        handled: state.handled,
        queued,
        inFlight: state.inFlight,
    });
}
