import type { DomainState } from '../pacing/domain-state';
import type { ResolvedPolicy } from '../pacing/policy';
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
    const interval = state.interval(now, floorMs, policy);
    const ramp = state.rampupState;
    const quota = policy.quota;
    return Object.freeze({
        domain: state.domain,
        scope: policy.scopeKey,
        ready: state.isReady(now, policy),
        readyAt: state.readyAt(now, policy),
        crawlDelayMs: state.crawlDelayMs,
        intervalMs: interval.ms,
        intervalReason: interval.reason,
        concurrencyLimit: state.concurrencyLimit(policy),
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
