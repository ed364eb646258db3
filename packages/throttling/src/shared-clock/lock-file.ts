import { closeSync, openSync, statSync, unlinkSync } from 'node:fs';

import { SharedClockError } from '../core/errors';
import type { Clock } from '../core/clock';

/** What tells one lock file from another: a lock removed and created again is a different file. */
export interface LockIdentity {
    dev: number;
    ino: number;
    mtimeMs: number;
}

/**
 * The filesystem calls a {@link LockFile} makes. The default is `node:fs`; the seam exists so a test
 * can count attempts and run a second waiter at an exact point (between judging a lock stale and
 * removing it), which no timing-based test can reach reliably.
 */
export interface LockFs {
    /** Creates an empty file at `path`; fails with `EEXIST` when anything (even a directory) is there. */
    createExclusive(path: string): void;
    /** Identity and age of what is at `path`; fails with `ENOENT` when nothing is. */
    stat(path: string): LockIdentity;
    unlink(path: string): void;
}

export const nodeLockFs: LockFs = {
    createExclusive: (path) => closeSync(openSync(path, 'wx')),
    stat: (path) => {
        const { dev, ino, mtimeMs } = statSync(path);
        return { dev, ino, mtimeMs };
    },
    unlink: (path) => unlinkSync(path),
};

export interface LockFileOptions {
    /** Give up after this long: slept time counts even when `clock` stands still. */
    timeoutMs: number;
    /** A lock older than this was left by a process that died holding it. */
    staleMs: number;
    /** Lock ages and the deadline are measured on this clock. */
    clock: Clock;
    fs: LockFs;
}

// Why one attempt did not get the lock: busy (try again later), or a stale lock that cannot be removed.
type Failure = { busy: true } | { unremovable: string };

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? String(error);

const sameFile = (a: LockIdentity, b: LockIdentity) => a.dev === b.dev && a.ino === b.ino && a.mtimeMs === b.mtimeMs;

/**
 * Exclusive locks taken by creating a file with `O_EXCL` and released by removing it. A lock older
 * than `staleMs` is broken, under a second lock (`<path>.breaking`) and only if it is still the very
 * file judged stale: two waiters that judged the same lock stale must not both remove it, as the
 * second would remove the fresh lock the first had just taken and both would enter.
 */
export class LockFile {
    // A buffer to sleep on between attempts without leaving the synchronous call.
    private readonly sleeper = new Int32Array(new SharedArrayBuffer(4));

    constructor(private readonly options: LockFileOptions) {}

    /**
     * Takes the lock at `path`, sleeping between attempts, and returns the lock file taken (for
     * {@link release}). Throws after `timeoutMs`, naming `label`, the path and why.
     */
    acquire(path: string, label: string): LockIdentity {
        const { clock, timeoutMs } = this.options;
        const started = clock.now();
        let slept = 0;
        for (let attempt = 0; ; attempt++) {
            const outcome = this.attempt(path);
            if ('ino' in outcome) return outcome;
            const waited = Math.max(clock.now() - started, slept);
            if (waited >= timeoutMs) {
                throw new SharedClockError(
                    'unremovable' in outcome
                        ? `${label}: cannot remove stale lock ${outcome.unremovable}; gave up after ${timeoutMs} ms (remove it by hand)`
                        : `${label} (${path}) was held for more than ${timeoutMs} ms`,
                );
            }
            // Locks are held for one read and one write: wait briefly, a little longer each time.
            const pause = Math.min(1 + attempt, 10, timeoutMs - waited);
            Atomics.wait(this.sleeper, 0, 0, pause);
            slept += pause;
        }
    }

    /**
     * Removes the lock taken by {@link acquire}, unless it is no longer there: a holder slower than
     * `staleMs` had its lock broken, and the file now at `path` belongs to another process.
     */
    release(path: string, taken: LockIdentity): void {
        const { fs } = this.options;
        try {
            if (sameFile(fs.stat(path), taken)) fs.unlink(path);
        } catch (error) {
            if (codeOf(error) !== 'ENOENT') throw error;
        }
    }

    private attempt(path: string): LockIdentity | Failure {
        const { fs } = this.options;
        try {
            fs.createExclusive(path);
            return fs.stat(path);
        } catch (error) {
            if (codeOf(error) !== 'EEXIST') throw error;
        }
        const judged = this.staleFile(path);
        return judged ? this.breakStale(path, judged) : { busy: true };
    }

    /** The file at `path` if it is older than `staleMs`; undefined when fresh or gone. */
    private staleFile(path: string): LockIdentity | undefined {
        try {
            const found = this.options.fs.stat(path);
            return this.options.clock.now() - found.mtimeMs > this.options.staleMs ? found : undefined;
        } catch {
            return undefined;
        }
    }

    /** Removes `judged` if it is still the file at `path`; the caller then sleeps and tries again. */
    private breakStale(path: string, judged: LockIdentity): Failure {
        const { fs } = this.options;
        const breaker = `${path}.breaking`;
        try {
            fs.createExclusive(breaker);
        } catch (error) {
            if (codeOf(error) !== 'EEXIST') return { unremovable: `${path}: ${codeOf(error)} on ${breaker}` };
            // Held for two calls, so an old one was left by a breaker that died: remove it. Two waiters
            // doing so at once is still safe, as each removes the lock only if it is the one it judged.
            return this.staleFile(breaker) ? this.unlink(breaker) : { busy: true };
        }
        try {
            const current = this.staleFile(path);
            return current && sameFile(current, judged) ? this.unlink(path) : { busy: true };
        } finally {
            this.unlink(breaker);
        }
    }

    private unlink(path: string): Failure {
        try {
            this.options.fs.unlink(path);
        } catch (error) {
            if (codeOf(error) !== 'ENOENT') return { unremovable: `${path}: ${codeOf(error)}` };
        }
        return { busy: true };
    }
}
