import { InvalidArgumentError } from './errors';

/**
 * A source of wall-clock time in epoch milliseconds.
 *
 * Every pacing decision takes its time from a `Clock`, so tests drive time by hand and persisted
 * deadlines stay meaningful across process restarts (they are epoch-based, not monotonic).
 */
export interface Clock {
    now(): number;
}

/** The real clock. */
export const systemClock: Clock = {
    now: () => Date.now(),
};

/**
 * A clock that only moves when told to: for deterministic tests of pacing decisions.
 */
export class ManualClock implements Clock {
    // Current time; starts at a fixed, recognisable epoch so test failures are easy to read.
    private current: number;

    constructor(startMs = Date.UTC(2026, 0, 1)) {
        this.current = startMs;
    }

    now(): number {
        return this.current;
    }

    /** Moves time forward by `ms` (never backwards: deadlines must not be revisited). */
    advance(ms: number): number {
        if (!(ms >= 0))
            throw new InvalidArgumentError(`ManualClock.advance expects a non-negative number of ms, got ${ms}`);
        this.current += ms;
        return this.current;
    }

    /** Jumps to an absolute time, which must not be earlier than the current one. */
    set(ms: number): void {
        if (ms < this.current)
            throw new InvalidArgumentError(`ManualClock.set cannot go back in time (${ms} < ${this.current})`);
        this.current = ms;
    }
}
