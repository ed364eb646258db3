/**
 * The Redis keys of one domain key. Every key a script touches for one domain key carries the same
 * hash tag, `{<prefix><encoded key>}`, so on Redis Cluster they sit in one hash slot and one script
 * may read and write them together.
 */
export interface RedisClockKeys {
    /** Hash: `next` (next free dispatch), `backoff` (backoff deadline), `level` and `decay` of the backoff. */
    clock: string;
    /** Sorted set of concurrency lease tokens, scored by when each lease runs out. */
    slots: string;
    /** Hash: `window` (start of the current quota window) and `spent` in it. */
    quota: string;
    /** Hash: a learned `rate` (requests per second) and `at`, when it was learned. */
    rate: string;
}

/**
 * Makes a domain key safe inside a hash tag: `{` and `}` would end or split the tag (Cluster takes
 * the text between the first `{` and the next `}`), so they and `%` become `%7B`, `%7D`, `%25`.
 * Control characters are escaped the same way to keep keys readable in `redis-cli`. Everything else
 * (IPv6 brackets and colons, unicode) stays: Redis keys are binary-safe.
 */
export function encodeKeyPart(key: string): string {
    return key.replace(
        // eslint-disable-next-line no-control-regex
        /[%{}\u0000-\u001f\u007f]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
    );
}

/** The keys of `key` under `prefix` (a prefix holds no braces; the options check that). */
export function redisClockKeys(prefix: string, key: string): RedisClockKeys {
    const tag = `{${prefix}${encodeKeyPart(key)}}`;
    return { clock: `${tag}:clock`, slots: `${tag}:slots`, quota: `${tag}:quota`, rate: `${tag}:rate` };
}

/**
 * The hash tag Redis Cluster hashes `redisKey` by: the text between the first `{` and the next
 * `}` when it is not empty, else the whole key.
 */
export function clusterHashTag(redisKey: string): string {
    const open = redisKey.indexOf('{');
    if (open === -1) return redisKey;
    const close = redisKey.indexOf('}', open + 1);
    if (close === -1 || close === open + 1) return redisKey;
    return redisKey.slice(open + 1, close);
}
