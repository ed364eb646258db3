import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock, ManualClock } from 'crawlee-throttling';
import type { LockFs } from '../../packages/throttling/src/shared-clock/lock-file';
import { LockFile, nodeLockFs } from '../../packages/throttling/src/shared-clock/lock-file';

const T0 = Date.UTC(2026, 0, 1);
// Small, so a test that waits out the timeout with real sleeps stays short.
const TIMEOUT = 50;
// Sleeps of 1, 2, … 9 and then the 5 ms left: 11 attempts fill 50 ms. A spinning loop makes thousands.
const MAX_ATTEMPTS = 12;
// A loop that never ends would hang jest in a synchronous call: stop it with a failure instead.
const RUNAWAY = 500;

let dir: string;
let lock: string;

beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'file-clock-locks-'));
    lock = join(dir, 'a.com.json.lock');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A clock at the real time (file ages come from the real filesystem) that moves only when told. */
const clockAtNow = () => new ManualClock(Date.now());

const makeOld = (path: string) => {
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(path, old, old);
};

const errnoError = (code: string, path: string) => Object.assign(new Error(`${code}: ${path}`), { code });

type Hook = (op: keyof LockFs, path: string, nth: number) => void;

/**
 * node:fs through the lock seam, recording each call as "op path": `before` runs ahead of a call and
 * may throw in its place, `after` runs once it is done. Stops a loop that does not end, as the old
 * code did, with a clear failure instead of a hang.
 */
function recordingFs({ before, after }: { before?: Hook; after?: Hook } = {}) {
    const calls: string[] = [];
    const count = (op: keyof LockFs, path: string) => calls.filter((c) => c === `${op} ${path}`).length;
    const wrap =
        <R>(op: keyof LockFs, call: (path: string) => R) =>
        (path: string): R => {
            if (calls.length >= RUNAWAY) throw new Error(`runaway: ${RUNAWAY} lock calls, last ${calls.at(-1)}`);
            calls.push(`${op} ${path}`);
            before?.(op, path, count(op, path));
            const result = call(path);
            after?.(op, path, count(op, path));
            return result;
        };
    const fs: LockFs = {
        createExclusive: wrap('createExclusive', nodeLockFs.createExclusive),
        stat: wrap('stat', nodeLockFs.stat),
        unlink: wrap('unlink', nodeLockFs.unlink),
    };
    return { fs, count };
}

describe('FileDomainClock locks', () => {
    test('a directory where the lock file should be ends in a clear error within lockTimeoutMs, not a spin', () => {
        mkdirSync(lock);
        makeOld(lock);
        const { fs, count } = recordingFs();
        const clock = new FileDomainClock(dir, {
            lockTimeoutMs: TIMEOUT,
            staleLockMs: 1_000,
            clock: clockAtNow(),
            lockFs: fs,
        });

        expect(() => clock.reserve('a.com', T0, T0 + 1)).toThrow(
            `FileDomainClock: the lock of a.com: cannot remove stale lock ${lock}: EISDIR; gave up after ${TIMEOUT} ms`,
        );
        expect(count('createExclusive', lock)).toBeGreaterThan(1);
        expect(count('createExclusive', lock)).toBeLessThanOrEqual(MAX_ATTEMPTS);
        expect(existsSync(`${lock}.breaking`)).toBe(false);
    });

    test('a stale lock that cannot be removed (EPERM: another user owns it in a sticky /tmp) ends in a clear error', () => {
        writeFileSync(lock, '');
        makeOld(lock);
        // Tests run as root here, which no permission stops, so the refusal comes through the seam.
        const { fs, count } = recordingFs({
            before: (op, path) => {
                if (op === 'unlink' && path === lock) throw errnoError('EPERM', path);
            },
        });
        const clock = new FileDomainClock(dir, {
            lockTimeoutMs: TIMEOUT,
            staleLockMs: 1_000,
            clock: clockAtNow(),
            lockFs: fs,
        });

        expect(() => clock.reserve('a.com', T0, T0 + 1)).toThrow(`cannot remove stale lock ${lock}: EPERM`);
        expect(count('unlink', lock)).toBeGreaterThan(1);
        expect(count('unlink', lock)).toBeLessThanOrEqual(MAX_ATTEMPTS);
        expect(existsSync(lock)).toBe(true);
    });

    test('a live, slow holder makes waiters sleep between attempts, and the call fails after lockTimeoutMs even on a clock that stands still', () => {
        writeFileSync(lock, '');
        const { fs, count } = recordingFs();
        const clock = new FileDomainClock(dir, {
            lockTimeoutMs: TIMEOUT,
            staleLockMs: 1_000,
            clock: clockAtNow(),
            lockFs: fs,
        });

        expect(() => clock.reserve('a.com', T0, T0 + 1)).toThrow(
            `the lock of a.com (${lock}) was held for more than ${TIMEOUT} ms`,
        );
        expect(count('createExclusive', lock)).toBeGreaterThan(1);
        expect(count('createExclusive', lock)).toBeLessThanOrEqual(MAX_ATTEMPTS);
        expect(count('unlink', lock)).toBe(0);
    });

    test('two waiters that judged the same lock stale: the first breaks it and enters, the second does not', () => {
        writeFileSync(lock, '');
        makeOld(lock);
        const time = clockAtNow();
        const first = new LockFile({ timeoutMs: TIMEOUT, staleMs: 1_000, clock: time, fs: nodeLockFs });
        let firstHolds: ReturnType<LockFile['acquire']> | undefined;
        // The second waiter has judged the old lock stale (its first look at it); before it removes
        // it, the first waiter, which judged the same, breaks it and takes a fresh lock.
        const { fs, count } = recordingFs({
            after: (op, path, nth) => {
                if (op === 'stat' && path === lock && nth === 1) firstHolds = first.acquire(lock, 'first waiter');
            },
        });
        const second = new FileDomainClock(dir, {
            lockTimeoutMs: TIMEOUT,
            staleLockMs: 1_000,
            clock: time,
            lockFs: fs,
        });

        expect(() => second.reserve('a.com', T0, T0 + 1)).toThrow(`was held for more than ${TIMEOUT} ms`);
        expect(firstHolds).toBeDefined();
        expect(nodeLockFs.stat(lock)).toEqual(firstHolds);
        expect(count('unlink', lock)).toBe(0);
        expect(count('createExclusive', lock)).toBeLessThanOrEqual(MAX_ATTEMPTS);

        first.release(lock, firstHolds!);
        expect(second.reserve('a.com', T0, T0 + 1)).toEqual({ granted: true });
        expect(existsSync(lock)).toBe(false);
    });

    test('a holder slower than staleLockMs, whose lock was broken, leaves the lock now held by another in place', () => {
        const time = clockAtNow();
        const options = { timeoutMs: TIMEOUT, staleMs: 1_000, clock: time };
        // The slow holder took its lock a minute ago (file times are the filesystem's, not the clock's).
        const { fs: slowFs } = recordingFs({
            after: (op, path) => {
                if (op === 'createExclusive' && path === lock) makeOld(lock);
            },
        });
        const slow = new LockFile({ ...options, fs: slowFs });
        const next = new LockFile({ ...options, fs: nodeLockFs });
        const slowHeld = slow.acquire(lock, 'slow holder');
        const nextHeld = next.acquire(lock, 'next holder');
        expect(nextHeld).not.toEqual(slowHeld);

        slow.release(lock, slowHeld);
        expect(nodeLockFs.stat(lock)).toEqual(nextHeld);
        next.release(lock, nextHeld);
        expect(existsSync(lock)).toBe(false);
    });

    test('a breaking lock left by a breaker that died is removed once stale, and the stale lock is then broken', () => {
        writeFileSync(lock, '');
        writeFileSync(`${lock}.breaking`, '');
        makeOld(lock);
        makeOld(`${lock}.breaking`);
        const clock = new FileDomainClock(dir, { lockTimeoutMs: TIMEOUT, staleLockMs: 1_000, clock: clockAtNow() });

        expect(clock.reserve('a.com', T0, T0 + 1)).toEqual({ granted: true });
        expect(existsSync(lock)).toBe(false);
        expect(existsSync(`${lock}.breaking`)).toBe(false);
    });
});
