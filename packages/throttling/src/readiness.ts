import type { StalledDomain } from './errors';

/**
 * Where a crawl stands, from `ThrottlingRequestManager.checkReadiness()`.
 * Precedence when combining domains: ready > stalled > waiting > finished.
 */
export type Readiness =
    /** A request can be handed out now. */
    | { kind: 'ready' }
    /** Work remains, but every domain with work waits for a clock (`readyAt`, epoch ms; null when
     * only in-flight requests remain). */
    | { kind: 'waiting'; readyAt: number | null; inFlight: number }
    /** Some domains have refused for longer than `maxDomainStallSecs`. */
    | { kind: 'stalled'; domains: StalledDomain[] }
    /** Nothing is queued or in flight anywhere. */
    | { kind: 'finished' };

/** One domain as `ThrottlingRequestManager.snapshot()` shows it. Times are epoch ms. */
export interface DomainSnapshot {
    readonly domain: string;
    /** Both clocks have passed. */
    readonly ready: boolean;
    /** When both clocks pass. */
    readonly readyAt: number;
    /** Declared crawl delay (robots.txt), ms. */
    readonly crawlDelayMs: number;
    /** Interval in force between dispatches: max(crawl delay, floor), ms. */
    readonly intervalMs: number;
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
    readonly dispatched: number;
    readonly handled: number;
    /** Requests waiting in the domain's queue. */
    readonly queued: number;
    /** Requests handed out and not yet handled or reclaimed. */
    readonly inFlight: number;
}
