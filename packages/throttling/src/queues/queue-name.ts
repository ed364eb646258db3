import { createHash } from 'node:crypto';

/** Every queue created for a throttled domain starts with this, so our queues never clash with user queues. */
export const THROTTLED_QUEUE_NAME_PREFIX = 'throttled-';

/**
 * Upper bound on the length of a generated queue name.
 *
 * Crawlee validates nothing beyond "non-empty string", but `@crawlee/memory-storage` uses the name as a
 * directory name (`storage/request_queues/<name>/<request id>.json`). 255 bytes is the per-component limit
 * on common filesystems, and Windows' 260-character MAX_PATH also has to fit the storage path and file
 * names, so 128 leaves room. Keys whose encoding does not fit are hashed (see {@link throttledQueueName}).
 */
export const MAX_THROTTLED_QUEUE_NAME_LENGTH = 128;

const SAFE_CHAR = /^[a-z0-9.-]$/;
const HASH_MARKER = '_h';
const HASH_HEX_LENGTH = 32;

// memory-storage treats a name containing this (unanchored) pattern as a queue *id* when it reopens a queue
// directory that has no metadata file, which is the default. Such a queue would lose its name on restart.
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

const HASHED_NAME = new RegExp(
    `^${THROTTLED_QUEUE_NAME_PREFIX}[a-z0-9._-]*${HASH_MARKER}[0-9a-f]{${HASH_HEX_LENGTH}}$`,
);

/**
 * Builds the storage name of the request queue that holds requests for one domain key.
 *
 * The result is `throttled-<encoded key>`, using only `[a-z0-9._-]`, so it is a safe directory name on every
 * common filesystem and unaffected by memory-storage's case-insensitive name lookup. Encoding:
 * `[a-z0-9.-]` stay as they are; every other UTF-16 code unit becomes `_xx` (below U+0100) or `_uxxxx`
 * (lowercase hex), so `_` itself is `_5f`, `:` is `_3a` and `A` is `_41`. A trailing `.` is escaped because
 * Windows drops trailing dots from directory names, and a `-` is escaped where the name would otherwise
 * contain a UUID (see above). The mapping is injective and {@link domainKeyFromQueueName} reverses it.
 *
 * Names longer than {@link MAX_THROTTLED_QUEUE_NAME_LENGTH} keep a readable prefix followed by `_h` and 128
 * bits of SHA-256 of the full encoding. `_h` never occurs in a plain encoding, so hashed and plain names
 * cannot collide, and two hashed names collide only on a SHA-256 prefix collision. Hashed names are
 * recognised by {@link isThrottledQueueName} but cannot be reversed. No real hostname of up to 118
 * characters (without `_`) is hashed.
 *
 * @param domainKey A throttling key, e.g. `example.com` or `::1`.
 * @returns The queue name, e.g. `throttled-example.com`, `throttled-_3a_3a1`.
 * @throws {TypeError} If `domainKey` is not a non-empty string.
 */
export function throttledQueueName(domainKey: string): string {
    if (typeof domainKey !== 'string' || domainKey.length === 0) {
        throw new TypeError(`A throttled queue name needs a non-empty domain key, got ${JSON.stringify(domainKey)}.`);
    }
    const tokens = encodeTokens(domainKey);
    const encoded = tokens.join('');
    if (THROTTLED_QUEUE_NAME_PREFIX.length + encoded.length <= MAX_THROTTLED_QUEUE_NAME_LENGTH) {
        return THROTTLED_QUEUE_NAME_PREFIX + encoded;
    }

    const budget =
        MAX_THROTTLED_QUEUE_NAME_LENGTH - THROTTLED_QUEUE_NAME_PREFIX.length - HASH_MARKER.length - HASH_HEX_LENGTH;
    let readable = '';
    // Cut between tokens so the readable part never ends in half an escape.
    for (const token of tokens) {
        if (readable.length + token.length > budget) break;
        readable += token;
    }
    const hash = createHash('sha256').update(encoded).digest('hex').slice(0, HASH_HEX_LENGTH);
    return THROTTLED_QUEUE_NAME_PREFIX + readable + HASH_MARKER + hash;
}

/**
 * Recovers the domain key from a name built by {@link throttledQueueName}.
 *
 * Only names that {@link throttledQueueName} would produce are accepted; other spellings of the same key
 * (e.g. an escaped letter) are rejected so that every key has exactly one queue.
 *
 * @param name A request queue name.
 * @returns The domain key, or `undefined` if the name is not one of ours or is a hashed (irreversible) name.
 */
export function domainKeyFromQueueName(name: string): string | undefined {
    if (typeof name !== 'string' || !name.startsWith(THROTTLED_QUEUE_NAME_PREFIX)) return undefined;
    const key = decode(name.slice(THROTTLED_QUEUE_NAME_PREFIX.length));
    if (key === undefined || key.length === 0) return undefined;
    return throttledQueueName(key) === name ? key : undefined;
}

/**
 * Tells whether a queue name was produced by {@link throttledQueueName}, including hashed names.
 *
 * @param name A request queue name.
 */
export function isThrottledQueueName(name: string): boolean {
    if (typeof name !== 'string') return false;
    if (domainKeyFromQueueName(name) !== undefined) return true;
    return name.length === MAX_THROTTLED_QUEUE_NAME_LENGTH && HASHED_NAME.test(name);
}

function encodeTokens(key: string): string[] {
    const tokens: string[] = [];
    for (let i = 0; i < key.length; i++) {
        const char = key[i]!;
        tokens.push(SAFE_CHAR.test(char) ? char : escape(char));
    }
    const last = tokens.length - 1;
    if (tokens[last] === '.') tokens[last] = escape('.');
    breakUuids(tokens);
    return tokens;
}

function breakUuids(tokens: string[]): void {
    // Each round escapes one "-", so this ends; a global replace could miss overlapping matches.
    for (;;) {
        const match = UUID.exec(tokens.join(''));
        if (match === null) return;
        const dashAt = match.index + match[0].indexOf('-');
        // Inside a match every token is one character, so the string offset is the token index
        // plus the extra length of any escapes before the match.
        let offset = 0;
        for (let t = 0; t < tokens.length; t++) {
            if (offset === dashAt) {
                tokens[t] = escape('-');
                break;
            }
            offset += tokens[t]!.length;
        }
    }
}

function escape(char: string): string {
    const code = char.charCodeAt(0);
    return code < 0x100 ? `_${code.toString(16).padStart(2, '0')}` : `_u${code.toString(16).padStart(4, '0')}`;
}

function decode(encoded: string): string | undefined {
    let key = '';
    let i = 0;
    while (i < encoded.length) {
        const char = encoded[i]!;
        if (char !== '_') {
            if (!SAFE_CHAR.test(char)) return undefined;
            key += char;
            i += 1;
            continue;
        }
        const wide = encoded[i + 1] === 'u';
        const hex = wide ? encoded.slice(i + 2, i + 6) : encoded.slice(i + 1, i + 3);
        if (!(wide ? /^[0-9a-f]{4}$/ : /^[0-9a-f]{2}$/).test(hex)) return undefined;
        key += String.fromCharCode(parseInt(hex, 16));
        i += (wide ? 2 : 1) + hex.length;
    }
    return key;
}
