import type { Clock } from '../core/clock';
import { RedisStorageError, RedisUnavailableError } from './redis-storage-error';

/** What the patience needs of a connection: its status, and its `ready` event after a reconnect. */
export interface ReconnectingConnection {
    readonly status: string;
    once(event: 'ready', listener: () => void): unknown;
    off(event: 'ready', listener: () => void): unknown;
}

/** Longest wait between two attempts while Redis is away (ioredis reconnects at most 1 s apart). */
const MAX_PAUSE_MS = 1_000;
/** Shortest wait between two attempts, so a connection that reports ready but fails cannot spin. */
const MIN_PAUSE_MS = 100;

/**
 * Redis replies that mean "not now" rather than "no": a server still loading its AOF or RDB at
 * start, a Cluster failing over. Any other reply (a script's ERR_…, a wrong type) is an answer.
 */
const TRANSIENT_REPLY = /^(LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|MASTERDOWN)\b/;
/** ioredis's errors for a call that did not reach Redis, or whose answer was lost with the connection. */
const CONNECTION_MESSAGE =
    /Connection is closed|Command timed out|Stream isn't writeable|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND/;

/** Whether `error` is Redis being away (worth another attempt once it is back), not an answer. */
export function isOutage(error: unknown): boolean {
    if (!(error instanceof Error)) return false;
    if (error.name === 'MaxRetriesPerRequestError') return true;
    if (error.name === 'ReplyError') return TRANSIENT_REPLY.test(error.message);
    return CONNECTION_MESSAGE.test(error.message);
}

/**
 * Rides a storage call through a Redis outage: a call that fails because Redis is away (the
 * connection dropped, a restart, a server still loading its data) is made again once ioredis has
 * reconnected, until `outageMs` after its first attempt; then it fails with a RedisUnavailableError
 * saying how long Redis was away. Answers of Redis (a script's error) fail at once.
 *
 * Every storage call may be made twice: the queue's scripts are safe to repeat (an add or update is
 * keyed by the request's id; a repeated lock only holds a request until its lock expires), a
 * record written twice is the same record, and a dataset item pushed just as the connection
 * dropped may be stored twice.
 */
export class OutagePatience {
    constructor(
        private readonly connection: ReconnectingConnection,
        /** How long one call waits for Redis to come back, ms (0: fail at the first outage). */
        private readonly outageMs: number,
        private readonly clock: Clock,
    ) {}

    async call<T>(what: string, attempt: () => Promise<T>): Promise<T> {
        const deadline = this.clock.now() + this.outageMs;
        for (;;) {
            try {
                return await attempt();
            } catch (error) {
                const cause = rootCause(error);
                if (!isOutage(cause)) throw error;
                const left = deadline - this.clock.now();
                if (left <= 0) throw this.gaveUp(what, cause);
                await this.untilReady(Math.min(left, MAX_PAUSE_MS));
            }
        }
    }

    private gaveUp(what: string, cause: unknown): RedisUnavailableError {
        const reason = cause instanceof Error ? cause.message : String(cause);
        return new RedisUnavailableError(
            `${what}: Redis did not answer for ${this.outageMs} ms (outageMs) (${reason}). ` +
                'What Redis holds stays there: run the crawl again once Redis is back, and it resumes.',
            { cause },
        );
    }

    /** Resolves when the connection is ready again, or after `ms`; never sooner than MIN_PAUSE_MS. */
    private untilReady(ms: number): Promise<void> {
        return new Promise((resolve) => {
            if (this.connection.status === 'ready') {
                setTimeout(resolve, MIN_PAUSE_MS);
                return;
            }
            const done = () => {
                clearTimeout(timer);
                this.connection.off('ready', done);
                resolve();
            };
            const timer = setTimeout(done, Math.max(ms, MIN_PAUSE_MS));
            this.connection.once('ready', done);
        });
    }
}

/** The error beneath the storage's own wrapping (storageError keeps the original as `cause`). */
function rootCause(error: unknown): unknown {
    let current = error;
    while (
        (current instanceof RedisStorageError || current instanceof RedisUnavailableError) &&
        current.cause !== undefined
    )
        current = current.cause;
    return current;
}
