import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Clock } from '../time/clock';
import { systemClock } from '../time/clock';
import { ThrottlingOptionsError } from '../errors';
import type { SharedClocks, SharedDomainClock, SharedReservation } from './shared-domain-clock';
import { decideReservation, decideSettlement } from './shared-domain-clock';
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
     * Time source for lock ages (pacing times come from the manager).
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

const EMPTY: SharedClocks = { nextAt: 0, backoffUntil: 0 };

/** Longest file name part taken from a key as it is; longer keys are hashed. */
const MAX_READABLE_NAME = 150;

/**
 * A {@link SharedDomainClock} in a directory that every crawler process can reach (one machine, or
 * a shared filesystem with working exclusive create): one small JSON file per domain key, changed
 * under a per-key lock file created with `O_EXCL`, written to a temporary file and renamed so a
 * reader never sees half a file.
 */
export class FileDomainClock implements SharedDomainClock {
    // Where the per-key files live.
    readonly dir: string;
    // Takes and breaks the per-key lock files.
    private readonly locks: LockFile;

    constructor(dir: string, options: FileDomainClockOptions = {}) {
        if (typeof dir !== 'string' || dir.length === 0)
            throw new ThrottlingOptionsError('FileDomainClock needs a directory path (a non-empty string)');
        const { lockTimeoutMs = 5_000, staleLockMs = 10_000, clock = systemClock, lockFs = nodeLockFs } = options;
        if (!(lockTimeoutMs > 0))
            throw new ThrottlingOptionsError(`FileDomainClock lockTimeoutMs must be > 0, got ${String(lockTimeoutMs)}`);
        if (!(staleLockMs > 0))
            throw new ThrottlingOptionsError(`FileDomainClock staleLockMs must be > 0, got ${String(staleLockMs)}`);
        this.dir = dir;
        this.locks = new LockFile({ timeoutMs: lockTimeoutMs, staleMs: staleLockMs, clock, fs: lockFs });
        mkdirSync(dir, { recursive: true });
    }

    reserve(key: string, now: number, nextAt: number): SharedReservation {
        return this.locked(key, (clocks) => decideReservation(clocks, now, nextAt));
    }

    extend(key: string, clocks: { nextAt?: number; backoffUntil?: number }): void {
        this.locked(key, (current) => ({
            reservation: undefined,
            clocks: {
                nextAt: Math.max(current.nextAt, clocks.nextAt ?? 0),
                backoffUntil: Math.max(current.backoffUntil, clocks.backoffUntil ?? 0),
            },
        }));
    }

    settle(key: string, leasedUntil: number, nextAt: number): void {
        this.locked(key, (current) => ({
            reservation: undefined,
            clocks: decideSettlement(current, leasedUntil, nextAt),
        }));
    }

    /** The shared clocks of `key` as stored now (for reports and tests). */
    read(key: string): SharedClocks {
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

    private locked<T>(key: string, change: (clocks: SharedClocks) => { reservation: T; clocks: SharedClocks }): T {
        const file = this.fileOf(key);
        const lock = `${file}.lock`;
        const taken = this.locks.acquire(lock, `FileDomainClock: the lock of ${key}`);
        try {
            const current = this.load(file);
            const { reservation, clocks } = change(current);
            if (clocks.nextAt !== current.nextAt || clocks.backoffUntil !== current.backoffUntil) {
                const temporary = `${file}.${process.pid}.tmp`;
                writeFileSync(temporary, JSON.stringify(clocks));
                renameSync(temporary, file);
            }
            return reservation;
        } finally {
            this.locks.release(lock, taken);
        }
    }

    private load(file: string): SharedClocks {
        let text: string;
        try {
            text = readFileSync(file, 'utf8');
        } catch {
            return { ...EMPTY };
        }
        try {
            const parsed = JSON.parse(text) as Partial<SharedClocks>;
            const finite = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
            return { nextAt: finite(parsed.nextAt), backoffUntil: finite(parsed.backoffUntil) };
        } catch {
            // A file that does not parse holds no clocks worth keeping; the next write replaces it.
            return { ...EMPTY };
        }
    }
}
