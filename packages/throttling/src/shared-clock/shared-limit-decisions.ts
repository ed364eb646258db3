import type { SharedClocks } from '../core/shared-domain-clock';
import type {
    QuotaSpend,
    RefusalPolicy,
    SharedRate,
    SharedRefusal,
    SharedTally,
    SlotLease,
    TallyCounts,
} from '../core/shared-limit-types';
import { InvalidArgumentError } from '../core/errors';

/**
 * Everything one key holds in a store that keeps it as one record (`FileDomainClock`): the two clocks,
 * the shared backoff's level and decay, concurrency leases, the quota window and a learned rate.
 * The decisions below are the ones the Redis scripts make, in TypeScript; each takes `now` and
 * returns the answer and the record to write.
 */
export interface SharedKeyRecord extends SharedClocks {
    /** Backoff level (bursts in a row) and when it starts over. */
    level: number;
    decayAt: number;
    /** Concurrency leases: token → when it runs out. */
    slots: Record<string, number>;
    /** The quota window holding the latest spend, and the spend in it. */
    quota?: { window: number; spent: number };
    rate?: SharedRate;
    /** Dispatches and accepted answers of every host (`tally`). */
    tally?: TallyCounts;
}

type Decision<T> = { answer: T; record: SharedKeyRecord };

/** Highest shared backoff level, as in one process (base × factor^19 is far past any cap). */
export const MAX_SHARED_LEVEL = 20;

/** As the Redis script: one escalation per burst across hosts; a server wait only lengthens a running backoff. */
export function decideRefusal(record: SharedKeyRecord, now: number, policy: RefusalPolicy): Decision<SharedRefusal> {
    const wait = policy.waitMs !== undefined && policy.waitMs > 0 ? Math.ceil(policy.waitMs) : undefined;
    if (record.backoffUntil > now) {
        const backoffUntil =
            wait === undefined
                ? record.backoffUntil
                : Math.max(record.backoffUntil, now + Math.min(wait, policy.maxMs));
        const answer = { escalated: false, backoffUntil, level: record.level, waitMs: backoffUntil - now };
        // The quiet period that ends the level counts from the backoff's end: it moves with it.
        const decayAt = record.decayAt + (backoffUntil - record.backoffUntil);
        return { answer, record: { ...record, backoffUntil, decayAt } };
    }
    const level = Math.min((record.decayAt !== 0 && now >= record.decayAt ? 0 : record.level) + 1, MAX_SHARED_LEVEL);
    const exponential = policy.baseMs * (policy.factor ?? 2) ** (level - 1);
    const waitMs = Math.ceil(Math.min(wait ?? exponential, policy.maxMs));
    const backoffUntil = now + waitMs;
    const decayAt = Math.max(backoffUntil, record.nextAt) + waitMs;
    return {
        answer: { escalated: true, backoffUntil, level, waitMs },
        record: { ...record, backoffUntil, level, decayAt },
    };
}

/** Takes one of `limit` leases, after dropping those that ran out (a dead host's). */
export function decideAcquire(
    record: SharedKeyRecord,
    now: number,
    limit: number,
    leaseMs: number,
    token: string,
): Decision<SlotLease> {
    const slots = Object.fromEntries(Object.entries(record.slots).filter(([, expires]) => expires > now));
    const held = Object.keys(slots).length;
    if (held >= limit) {
        const notBefore = Math.min(...Object.values(slots));
        return { answer: { granted: false, notBefore, held }, record: { ...record, slots } };
    }
    const expiresAt = now + Math.ceil(leaseMs);
    slots[token] = expiresAt;
    return { answer: { granted: true, token, expiresAt, held: held + 1 }, record: { ...record, slots } };
}

/** Extends a lease still held; false when it ran out or was released. */
export function decideRenew(record: SharedKeyRecord, now: number, token: string, leaseMs: number): Decision<boolean> {
    const expires = record.slots[token];
    if (expires === undefined || expires <= now) return { answer: false, record };
    return { answer: true, record: { ...record, slots: { ...record.slots, [token]: now + Math.ceil(leaseMs) } } };
}

/** Gives a lease back; false when it was no longer held. */
export function decideRelease(record: SharedKeyRecord, token: string): Decision<boolean> {
    if (!(token in record.slots)) return { answer: false, record };
    const { [token]: _released, ...slots } = record.slots;
    return { answer: true, record: { ...record, slots } };
}

/** Spends `cost` in the window holding `now`, all-or-nothing; an empty window takes any cost. */
export function decideSpend(
    record: SharedKeyRecord,
    now: number,
    cost: number,
    limit: number,
    windowMs: number,
): Decision<QuotaSpend> {
    const window = Math.floor(now / windowMs) * windowMs;
    const spent = record.quota?.window === window ? record.quota.spent : 0;
    const ends = window + windowMs;
    if (spent !== 0 && spent + cost > limit) return { answer: { granted: false, spent, notBefore: ends }, record };
    const quota = { window, spent: spent + cost };
    return { answer: { granted: true, spent: quota.spent, windowEndsAt: ends }, record: { ...record, quota } };
}

/**
 * Corrects a spend made at `spentAt` by `delta` while its window is the one kept (never below 0);
 * answers that window's spend after it, or 0 when a later window replaced it.
 */
export function decideAdjust(
    record: SharedKeyRecord,
    delta: number,
    windowMs: number,
    spentAt: number,
): Decision<number> {
    const window = Math.floor(spentAt / windowMs) * windowMs;
    if (record.quota?.window !== window) return { answer: 0, record };
    const quota = { window, spent: Math.max(0, record.quota.spent + delta) };
    return { answer: quota.spent, record: { ...record, quota } };
}

/** Keeps the rate learned latest (at a tie, the lower one) and answers the rate in force. */
export function decideShareRate(record: SharedKeyRecord, offered: SharedRate): Decision<SharedRate> {
    const current = record.rate;
    const keep =
        current !== undefined &&
        (current.at > offered.at || (current.at === offered.at && current.rate <= offered.rate));
    const rate = keep ? current : { ...offered };
    return { answer: { ...rate }, record: keep ? record : { ...record, rate } };
}

/** Adds a host's counts to the key's and answers the totals with the rate in force. */
export function decideTally(record: SharedKeyRecord, add: TallyCounts): Decision<SharedTally> {
    const tally = {
        dispatched: (record.tally?.dispatched ?? 0) + add.dispatched,
        answered: (record.tally?.answered ?? 0) + add.answered,
    };
    return { answer: { ...tally, ...(record.rate ? { rate: { ...record.rate } } : {}) }, record: { ...record, tally } };
}

/** Throws an InvalidArgumentError naming the field unless both counts are whole numbers >= 0. */
export function checkTally(add: TallyCounts): void {
    for (const field of ['dispatched', 'answered'] as const) {
        const value = add?.[field];
        if (!(Number.isSafeInteger(value) && value >= 0))
            throw new InvalidArgumentError(`tally ${field} must be a whole number >= 0, got ${String(value)}`);
    }
}

/** Throws an InvalidArgumentError naming `what` unless `value` is a finite number > 0 (and whole, if asked). */
export function checkPositive(what: string, value: number, whole: boolean): void {
    if (!(Number.isFinite(value) && value > 0 && (!whole || Number.isInteger(value))))
        throw new InvalidArgumentError(`${what} must be a ${whole ? 'whole ' : ''}number > 0, got ${String(value)}`);
}

/** Throws an InvalidArgumentError naming `what` unless `value` is a finite number. */
export function checkFinite(what: string, value: number): void {
    if (!Number.isFinite(value))
        throw new InvalidArgumentError(`${what} must be a finite number, got ${String(value)}`);
}

/** Checks a {@link RefusalPolicy}, naming the bad field. */
export function checkRefusalPolicy(policy: RefusalPolicy): void {
    checkPositive('recordRefusal baseMs', policy.baseMs, false);
    checkPositive('recordRefusal maxMs', policy.maxMs, false);
    if (policy.factor !== undefined && !(Number.isFinite(policy.factor) && policy.factor >= 1))
        throw new InvalidArgumentError(`recordRefusal factor must be a number >= 1, got ${String(policy.factor)}`);
    if (policy.waitMs !== undefined && !(Number.isFinite(policy.waitMs) && policy.waitMs >= 0))
        throw new InvalidArgumentError(
            `recordRefusal waitMs must be a number of ms >= 0, got ${String(policy.waitMs)}`,
        );
}

/** Checks the arguments of a quota spend, naming the bad one. */
export function checkSpend(cost: number, limit: number, windowMs: number): void {
    if (!(Number.isFinite(cost) && cost >= 0))
        throw new InvalidArgumentError(`spendQuota cost must be a number >= 0, got ${String(cost)}`);
    checkPositive('spendQuota limit', limit, false);
    checkPositive('spendQuota windowMs', windowMs, true);
}
