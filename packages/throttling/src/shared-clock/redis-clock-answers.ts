/** How {@link RedisDomainClock.recordRefusal} escalates a shared backoff. */
export interface RefusalPolicy {
    /** The server's wait (Retry-After), in ms, when it gave one: used instead of the exponential step. */
    waitMs?: number;
    /** The first backoff of a burst, in ms. */
    baseMs: number;
    /** The longest backoff, in ms (a server wait too is capped by it). */
    maxMs: number;
    /** How much each escalation multiplies the backoff. @default 2 */
    factor?: number;
}

/** The shared backoff after {@link RedisDomainClock.recordRefusal}, in this host's time. */
export interface SharedRefusal {
    /** Whether this refusal started a new backoff (false: one was running, from this host or another). */
    escalated: boolean;
    /** Until when every host holds the key. */
    backoffUntil: number;
    /** The shared level (how many bursts in a row). */
    level: number;
    /** How long the backoff runs from now, in ms. */
    waitMs: number;
}

/** The answer of {@link RedisDomainClock.acquireSlot}. */
export type SlotLease =
    | { granted: true; token: string; expiresAt: number; held: number }
    /** `notBefore`: when the first lease runs out (a release frees one sooner). */
    | { granted: false; notBefore: number; held: number };

/** The answer of {@link RedisDomainClock.spendQuota}. */
export type QuotaSpend =
    | { granted: true; spent: number; windowEndsAt: number }
    /** `notBefore`: when the next window opens. */
    | { granted: false; spent: number; notBefore: number };

/**
 * Longest duration sent to Redis, in ms (about 31 years): keeps every Redis time within 13 digits,
 * which Lua formats exactly, whatever far-off time a caller passes.
 */
const MAX_DELTA_MS = 1e12;

/** `at` as a whole number of ms from `now`, clamped to what Redis times can hold. */
export function toDelta(at: number, now: number): number {
    if (!Number.isFinite(at) || !Number.isFinite(now))
        throw new RangeError(`RedisDomainClock: times must be finite epoch ms, got ${String(at)} at ${String(now)}`);
    return Math.min(Math.max(Math.ceil(at - now), -MAX_DELTA_MS), MAX_DELTA_MS);
}

/** A script's answer as numbers (Redis answers integers, and some values as strings). */
export function asNumbers(reply: unknown): number[] {
    if (!Array.isArray(reply)) throw new Error(`unexpected answer from the script: ${JSON.stringify(reply)}`);
    return reply.map((v) => Number(v));
}

/** Throws a RangeError naming `what` unless `value` is a finite number > 0 (and whole, if asked). */
export function checkPositive(what: string, value: number, whole: boolean): void {
    if (!(Number.isFinite(value) && value > 0 && (!whole || Number.isInteger(value))))
        throw new RangeError(`${what} must be a ${whole ? 'whole ' : ''}number > 0, got ${String(value)}`);
}

/** Checks a {@link RefusalPolicy}, naming the bad field. */
export function checkRefusalPolicy(policy: RefusalPolicy): void {
    checkPositive('recordRefusal baseMs', policy.baseMs, false);
    checkPositive('recordRefusal maxMs', policy.maxMs, false);
    if (policy.factor !== undefined && !(Number.isFinite(policy.factor) && policy.factor >= 1))
        throw new RangeError(`recordRefusal factor must be a number >= 1, got ${String(policy.factor)}`);
    if (policy.waitMs !== undefined && !(Number.isFinite(policy.waitMs) && policy.waitMs >= 0))
        throw new RangeError(`recordRefusal waitMs must be a number of ms >= 0, got ${String(policy.waitMs)}`);
}
