import type { StalledDomain } from '../core/errors';

/** The four states of a crawl, by precedence when combining domains: ready > stalled > waiting > finished. */
export type ReadinessStatus = 'ready' | 'waiting' | 'stalled' | 'finished';

/**
 * Where a crawl stands, from `ThrottlingRequestManager.checkReadiness()` (or `readiness()`, the v4 name).
 * `status` is Crawlee v4's field name; `kind` carries the same value for code written against this
 * package's earlier releases.
 */
export type Readiness =
    /** A request can be handed out now. */
    | ReadinessOf<'ready'>
    /** Work remains, but every domain with work waits for a clock (`readyAt`, epoch ms; null when
     * only in-flight requests remain). */
    | (ReadinessOf<'waiting'> & { readyAt: number | null; inFlight: number })
    /** Some domains have refused for longer than `maxDomainStallSecs`. */
    | (ReadinessOf<'stalled'> & { domains: StalledDomain[]; reason: string })
    /** Nothing is queued or in flight anywhere. */
    | ReadinessOf<'finished'>;

/** The fields every readiness answer has. */
export interface ReadinessOf<S extends ReadinessStatus> {
    /** Where the crawl stands (the name Crawlee v4 uses). */
    readonly status: S;
    /** @deprecated The same value as `status`; use `status`, the name Crawlee v4 uses. */
    readonly kind: S;
}

/** A readiness answer with both names of its status filled in. */
export function readinessOf(status: 'ready' | 'finished'): Readiness;
export function readinessOf(status: 'waiting', extra: { readyAt: number | null; inFlight: number }): Readiness;
export function readinessOf(status: 'stalled', extra: { domains: StalledDomain[] }): Readiness;
export function readinessOf(status: ReadinessStatus, extra: object = {}): Readiness {
    if (status === 'stalled') {
        const { domains } = extra as { domains: StalledDomain[] };
        const reason = `${domains.map((d) => d.domain).join(', ')} refused every request for longer than maxDomainStallSecs`;
        return { status, kind: status, domains, reason };
    }
    return { status, kind: status, ...extra } as Readiness;
}

/** One domain as `ThrottlingRequestManager.snapshot()` shows it. Times are epoch ms. */
export interface DomainSnapshot {
    readonly domain: string;
    /** The `scopes` key whose settings apply; undefined for the defaults. */
    readonly scope?: string;
    /** Both clocks have passed and a concurrency slot is free. */
    readonly ready: boolean;
    /** When both clocks (and the per-slot clock) pass; Infinity while every slot is in use. */
    readonly readyAt: number;
    /** Declared crawl delay (robots.txt), ms. */
    readonly crawlDelayMs: number;
    /** Interval in force between dispatches, ms: the largest of the configured delay, crawl delay,
     * floor, pacing raised by backoff and pacing announced by the server. */
    readonly intervalMs: number;
    /** Which of those set the interval. */
    readonly intervalReason: import('../pacing/domain-state').IntervalReason;
    /** Most requests in flight at once (1 when robots.txt declared a crawl delay, unless overridden). */
    readonly concurrencyLimit: number;
    /** Pacing raised by backoff triggers, after decay, ms. */
    readonly penaltyMs: number;
    /** The rampup search (requests per second): current, highest safe and lowest unsafe rate. */
    readonly rampup?: { rate: number; safeRate: number; unsafeRate: number };
    /** The quota: limit per window and what the current window has spent. */
    readonly quota?: { limit: number; windowMs: number; spent: number };
    /** Crawl-delay clock. */
    readonly nextDispatchAt: number;
    /** Backoff clock. */
    readonly backoffUntil: number;
    readonly backingOff: boolean;
    /** Exponent the next escalation starts from (0 after decay). */
    readonly backoffExponent: number;
    /** When the exponent decays if no refusal comes. */
    readonly decayAt: number;
    /** Refusing time without a break, ms. */
    readonly stalledForMs: number;
    readonly refusals: number;
    /** Network errors or timeouts in a row with no answer (the error budget, `maxConsecutiveErrors`). */
    readonly consecutiveErrors: number;
    readonly dispatched: number;
    readonly handled: number;
    /** Requests waiting in the domain's queue. */
    readonly queued: number;
    /** Requests handed out and not yet handled or reclaimed. */
    readonly inFlight: number;
}
