import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Clock } from '../core/clock';
import { systemClock } from '../core/clock';
import { ThrottlingOptionsError } from '../core/errors';
import type { SharedClocks, SharedDomainClock, SharedReservation } from '../core/shared-domain-clock';
import { decideReservation, decideSettlement } from '../core/shared-domain-clock';
import type { SharedKeyRecord } from './shared-limit-decisions';
import {
    checkFinite,
    checkPositive,
    checkRefusalPolicy,
    checkSpend,
    decideAcquire,
    decideAdjust,
    decideRefusal,
    decideRelease,
    decideRenew,
    decideShareRate,
    decideTally,
    checkTally,
    decideSpend,
} from './shared-limit-decisions';
import type {
    QuotaSpend,
    RefusalPolicy,
    SharedRate,
    SharedRefusal,
    SharedTally,
    SlotLease,
    TallyCounts,
} from '../core/shared-limit-types';
import type { LockFs } from './lock-file';
import { LockFile, nodeLockFs } from './lock-file';

/** Options of {@link FileDomainClock}. */
export interface FileDomainClockOptions {
    /**
     * Give up waiting for a domain's lock after this long and throw: a lock is held for a file read
     * and a write, so a long wait means a dead filesystem, not a busy one. Also bounds the wait on a
     * stale lock that cannot be removed (another user's file in a sticky directory, a directory).
     * @default 5000
     */
    lockTimeoutMs?: number;
    /**
     * A lock file older than this was left by a process that died holding it, and is broken.
     * @default 10000
     */
    staleLockMs?: number;
    /**
     * Time source for lock ages, and for the limit calls when their caller passes no `now` (the
     * manager always does).
     * @default the system clock
     */
    clock?: Clock;
    /**
     * The filesystem calls of the lock files, for tests that interleave two waiters.
     * @default node:fs
     * @internal
     */
    lockFs?: LockFs;
}

const EMPTY: SharedKeyRecord = { nextAt: 0, backoffUntil: 0, level: 0, decayAt: 0, slots: {} };

/** Longest file name part taken from a key as it is; longer keys are hashed. */
const MAX_READABLE_NAME = 150;

/**
 * A {@link SharedDomainClock} in a directory that every crawler process can reach (one machine, or
 * a shared filesystem with working exclusive create): one small JSON file per domain key, changed
 * under a per-key lock file created with `O_EXCL`, written to a temporary file and renamed so a
 * reader never sees half a file. Besides the clocks it shares refusals, concurrency leases, quotas
 * and a learned rate, deciding as `RedisDomainClock` does (see `shared-limit-decisions.ts`). Nothing
 * expires: the directory outlives the crawl.
 */
export class FileDomainClock implements SharedDomainClock {
    // Where the per-key files live.
    readonly dir: string;
    // Takes and breaks the per-key lock files.
    private readonly locks: LockFile;
    // Time of the calls that take no `now`.
    private readonly clock: Clock;

    constructor(dir: string, options: FileDomainClockOptions = {}) {
        if (typeof dir !== 'string' || dir.length === 0)
            throw new ThrottlingOptionsError('FileDomainClock needs a directory path (a non-empty string)');
        const { lockTimeoutMs = 5_000, staleLockMs = 10_000, clock = systemClock, lockFs = nodeLockFs } = options;
        if (!(lockTimeoutMs > 0))
            throw new ThrottlingOptionsError(`FileDomainClock lockTimeoutMs must be > 0, got ${String(lockTimeoutMs)}`);
        if (!(staleLockMs > 0))
            throw new ThrottlingOptionsError(`FileDomainClock staleLockMs must be > 0, got ${String(staleLockMs)}`);
        this.dir = dir;
        this.clock = clock;
        this.locks = new LockFile({ timeoutMs: lockTimeoutMs, staleMs: staleLockMs, clock, fs: lockFs });
        mkdirSync(dir, { recursive: true });
    }

    reserve(key: string, now: number, nextAt: number): SharedReservation {
        return this.locked(key, (record) => {
            const { reservation, clocks } = decideReservation(record, now, nextAt);
            const tally = record.tally && decideTally(record, { dispatched: 0, answered: 0 }).answer;
            return { answer: tally ? { ...reservation, tally } : reservation, record: { ...record, ...clocks } };
        });
    }

    extend(key: string, clocks: { nextAt?: number; backoffUntil?: number }): void {
        this.locked(key, (record) => ({
            answer: undefined,
            record: {
                ...record,
                nextAt: Math.max(record.nextAt, clocks.nextAt ?? 0),
                backoffUntil: Math.max(record.backoffUntil, clocks.backoffUntil ?? 0),
            },
        }));
    }

    settle(key: string, leasedUntil: number, nextAt: number): void {
        this.locked(key, (record) => ({
            answer: undefined,
            record: { ...record, ...decideSettlement(record, leasedUntil, nextAt) },
        }));
    }

    recordRefusal(key: string, policy: RefusalPolicy, now = this.clock.now()): SharedRefusal {
        checkRefusalPolicy(policy);
        return this.locked(key, (record) => decideRefusal(record, now, policy));
    }

    acquireSlot(key: string, limit: number, leaseMs: number, now = this.clock.now()): SlotLease {
        checkPositive('acquireSlot limit', limit, true);
        checkPositive('acquireSlot leaseMs', leaseMs, false);
        return this.locked(key, (record) => decideAcquire(record, now, limit, leaseMs, randomUUID()));
    }

    renewSlot(key: string, token: string, leaseMs: number, now = this.clock.now()): boolean {
        checkPositive('renewSlot leaseMs', leaseMs, false);
        return this.locked(key, (record) => decideRenew(record, now, token, leaseMs));
    }

    releaseSlot(key: string, token: string): boolean {
        return this.locked(key, (record) => decideRelease(record, token));
    }

    spendQuota(key: string, cost: number, limit: number, windowMs: number, now = this.clock.now()): QuotaSpend {
        checkSpend(cost, limit, windowMs);
        return this.locked(key, (record) => decideSpend(record, now, cost, limit, windowMs));
    }

    adjustQuota(key: string, delta: number, windowMs: number, spentAt: number): number {
        checkFinite('adjustQuota delta', delta);
        checkPositive('adjustQuota windowMs', windowMs, true);
        return this.locked(key, (record) => decideAdjust(record, delta, windowMs, spentAt));
    }

    shareRate(key: string, rate: number, at: number): SharedRate {
        checkPositive('shareRate rate', rate, false);
        checkFinite('shareRate at', at);
        return this.locked(key, (record) => decideShareRate(record, { rate, at }));
    }

    readRate(key: string): SharedRate | undefined {
        const rate = this.load(this.fileOf(key)).rate;
        return rate && { ...rate };
    }

    tally(key: string, add: TallyCounts): SharedTally {
        checkTally(add);
        return this.locked(key, (record) => decideTally(record, add));
    }

    /** The shared clocks of `key` as stored now (for reports and tests). */
    read(key: string): SharedClocks {
        const { nextAt, backoffUntil } = this.load(this.fileOf(key));
        return { nextAt, backoffUntil };
    }

    /** Everything stored for `key` now (for reports and tests). */
    readRecord(key: string): SharedKeyRecord {
        return this.load(this.fileOf(key));
    }

    /**
     * The file holding `key`. Lower-case letters, digits, dots and hyphens stay as they are; every
     * other character becomes `_` and its four hex digits, so distinct keys never share a file, even on
     * a case-insensitive filesystem. Long keys are hashed.
     */
    fileOf(key: string): string {
        const readable = key.replace(/[^a-z0-9.-]/g, (c) => `_${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
        const name =
            readable.length <= MAX_READABLE_NAME
                ? readable
                : `_h${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
        return join(this.dir, `${name}.json`);
    }

    private locked<T>(key: string, change: (record: SharedKeyRecord) => { answer: T; record: SharedKeyRecord }): T {
        const file = this.fileOf(key);
        const lock = `${file}.lock`;
        const taken = this.locks.acquire(lock, `FileDomainClock: the lock of ${key}`);
        try {
            const current = this.load(file);
            const { answer, record } = change(current);
            const text = JSON.stringify(record);
            if (text !== JSON.stringify(current)) {
                const temporary = `${file}.${process.pid}.tmp`;
                writeFileSync(temporary, text);
                renameSync(temporary, file);
            }
            return answer;
        } finally {
            this.locks.release(lock, taken);
        }
    }

    private load(file: string): SharedKeyRecord {
        let text: string;
        try {
            text = readFileSync(file, 'utf8');
        } catch {
            return structuredClone(EMPTY);
        }
        try {
            return parseRecord(JSON.parse(text));
        } catch {
            // A file that does not parse holds no clocks worth keeping; the next write replaces it.
            return structuredClone(EMPTY);
        }
    }
}

const finite = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A stored record with every field checked (files of earlier releases hold only the two clocks). */
function parseRecord(parsed: unknown): SharedKeyRecord {
    const data = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
    const record: SharedKeyRecord = {
        nextAt: finite(data.nextAt),
        backoffUntil: finite(data.backoffUntil),
        level: finite(data.level),
        decayAt: finite(data.decayAt),
        slots: {},
    };
    if (typeof data.slots === 'object' && data.slots !== null)
        for (const [token, expires] of Object.entries(data.slots))
            if (finite(expires) > 0) record.slots[token] = finite(expires);
    const quota = data.quota as Record<string, unknown> | undefined;
    if (quota && typeof quota === 'object') record.quota = { window: finite(quota.window), spent: finite(quota.spent) };
    const rate = data.rate as Record<string, unknown> | undefined;
    if (rate && typeof rate === 'object' && finite(rate.rate) > 0)
        record.rate = { rate: finite(rate.rate), at: finite(rate.at) };
    const tally = data.tally as Record<string, unknown> | undefined;
    if (tally && typeof tally === 'object')
        record.tally = { dispatched: finite(tally.dispatched), answered: finite(tally.answered) };
    return record;
}
