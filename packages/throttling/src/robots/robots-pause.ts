import type { ResolvedPolicy } from '../pacing/policy';
import type { DomainStateStore } from '../pacing/domain-state-store';

/** What pausing an origin for its robots.txt needs. */
export interface RobotsPauseDeps {
    states: DomainStateStore;
    policyOf(key: string): ResolvedPolicy;
    now(): number;
    /** The key's clocks changed: reschedule its queue and publish them. */
    changed(key: string): void;
}

/**
 * Pauses a key before its robots.txt is read again, after a read the server answered with a 5xx or
 * a 429 (RFC 9309 §2.3.1.4). The pause holds the backoff clock only: it is not a refusal of a page,
 * so it adds no refusal, no time backed off, no stall time and nothing to the learned rate (a site's
 * robots.txt failing says nothing about how fast its pages may be fetched). Its length is the
 * answer's `Retry-After`, else the key's backoff steps (`baseDelaySecs` × `backoffFactor` per
 * retry already made), capped at `maxDelaySecs`.
 */
export class RobotsPause {
    constructor(private readonly deps: RobotsPauseDeps) {}

    /** Holds `key` for the pause before retry number `retriesMade` + 1; returns the pause in ms. */
    pause(key: string, waitMs: number | undefined, retriesMade: number): number {
        const policy = this.deps.policyOf(key);
        const stepMs = policy.backoffMinDelayMs * policy.backoffFactor ** Math.min(Math.max(0, retriesMade), 20);
        const pauseMs = Math.min(waitMs !== undefined && waitMs > 0 ? waitMs : stepMs, policy.backoffMaxDelayMs);
        const until = this.deps.now() + pauseMs;
        if (this.deps.states.update(key, (s) => s.pauseUntil(until))) this.deps.changed(key);
        return pauseMs;
    }
}
