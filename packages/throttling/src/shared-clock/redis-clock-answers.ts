import { InvalidArgumentError, SharedClockError } from '../core/errors';

/**
 * Longest duration sent to Redis, in ms (about 31 years): keeps every Redis time within 13 digits,
 * which Lua formats exactly, whatever far-off time a caller passes.
 */
const MAX_DELTA_MS = 1e12;

/** `at` as a whole number of ms from `now`, clamped to what Redis times can hold. */
export function toDelta(at: number, now: number): number {
    if (!Number.isFinite(at) || !Number.isFinite(now))
        throw new InvalidArgumentError(
            `RedisDomainClock: times must be finite epoch ms, got ${String(at)} at ${String(now)}`,
        );
    return Math.min(Math.max(Math.ceil(at - now), -MAX_DELTA_MS), MAX_DELTA_MS);
}

/** A script's answer as numbers (Redis answers integers, and some values as strings). */
export function asNumbers(reply: unknown): number[] {
    if (!Array.isArray(reply))
        throw new SharedClockError(`unexpected answer from the script: ${JSON.stringify(reply)}`);
    return reply.map((v) => Number(v));
}
