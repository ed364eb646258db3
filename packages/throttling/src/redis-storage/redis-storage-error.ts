import { RedisStorageError, RedisUnavailableError } from '../core/errors';

export { RedisStorageError, RedisUnavailableError } from '../core/errors';

/** Why a storage this client had found is no longer on Redis. */
export const GONE =
    'it was there before: it was deleted, or Redis restarted without persistence and lost it, and the crawl ' +
    'with it; start the crawl afresh, and run Redis with appendonly yes to keep a crawl across restarts';

/** What each error a script answers means, for the message. */
const REASONS: Record<string, string> = {
    ERR_QUEUE_NOT_FOUND: `the request queue does not exist (${GONE})`,
    ERR_REQUEST_NOT_FOUND: 'no request with this id is in the queue',
    ERR_REQUEST_HANDLED: 'the request was already handled',
    ERR_REQUEST_NOT_LOCKED: 'the request is not locked',
    ERR_LOCKED_BY_ANOTHER_CLIENT: 'another client holds the lock on this request',
};

/**
 * Rewrites a script's error reply (or a connection error) as an error naming `what`: a queue gone
 * from Redis is a RedisUnavailableError (the crawl cannot go on), anything else a RedisStorageError.
 */
export function storageError(what: string, error: unknown): RedisStorageError | RedisUnavailableError {
    const message = error instanceof Error ? error.message : String(error);
    const code = Object.keys(REASONS).find((c) => message.includes(c));
    const text = `${what}: ${code ? REASONS[code] : message}`;
    if (code === 'ERR_QUEUE_NOT_FOUND') return new RedisUnavailableError(text, { cause: error });
    return new RedisStorageError(text, { cause: error });
}
