import { InvalidArgumentError, describeValue as describe } from '../core/errors';

/**
 * What a response (or robots.txt) says about how fast a domain may be crawled. Recorded with
 * `ThrottlingRequestManager.recordPacingSignal()`.
 */
export type PacingSignal =
    /** The server refused: back off. `waitMs` is a server-given wait (Retry-After), if any. */
    | { reason: 'rateLimited'; url: string; waitMs?: number }
    /** The domain wants at least `intervalMs` between requests (robots.txt `Crawl-delay`). */
    | { reason: 'minInterval'; url: string; intervalMs: number }
    /** Raises the least interval of every throttled domain; never lowers it. */
    | { reason: 'minIntervalEverywhere'; intervalMs: number };

const REASONS = ['rateLimited', 'minInterval', 'minIntervalEverywhere'] as const;

/**
 * Throws `InvalidArgumentError` for a signal that is not one of the shapes above, so a caller from
 * JavaScript (or with a cast) learns what is wrong instead of a domain paced by `NaN`. A URL that
 * parses to no throttled key is not an error: the signal matches nothing.
 */
export function assertPacingSignal(signal: unknown): asserts signal is PacingSignal {
    const where = 'recordPacingSignal';
    if (typeof signal !== 'object' || signal === null) {
        throw new InvalidArgumentError(`${where}: the signal must be an object, got ${describe(signal)}`);
    }
    const { reason, url, waitMs, intervalMs } = signal as Record<string, unknown>;
    if (!REASONS.includes(reason as (typeof REASONS)[number])) {
        throw new InvalidArgumentError(
            `${where}: reason ${describe(reason)} is not one of ${REASONS.map((r) => `'${r}'`).join(', ')}`,
        );
    }
    if (reason !== 'minIntervalEverywhere' && typeof url !== 'string') {
        throw new InvalidArgumentError(
            `${where}: a '${String(reason)}' signal needs a url string, got ${describe(url)}`,
        );
    }
    if (reason === 'rateLimited' && waitMs !== undefined && !isWait(waitMs)) {
        throw new InvalidArgumentError(
            `${where}: waitMs must be a non-negative finite number of ms or left out, got ${describe(waitMs)}`,
        );
    }
    if (reason !== 'rateLimited' && !isWait(intervalMs)) {
        throw new InvalidArgumentError(
            `${where}: intervalMs must be a non-negative finite number of ms, got ${describe(intervalMs)}`,
        );
    }
}

function isWait(value: unknown): boolean {
    return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
