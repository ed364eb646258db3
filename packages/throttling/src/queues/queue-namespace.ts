import { createHash } from 'node:crypto';

import {
    domainKeyFromQueueName,
    isThrottledQueueName,
    THROTTLED_QUEUE_NAME_PREFIX,
    throttledQueueName,
} from './queue-name';
import { DEFAULTS } from '../options/defaults';

// A namespaced key is `~<hash>~<domain key>`. WHATWG accepts `~` in hostnames, so a domain key of
// the default namespace may itself read `~<8 hex>~…`: such a key gets an `^` in front, which no
// hostname contains (WHATWG forbids it), so the escaped name meets no name of an earlier run either.
// Keys that already start with `^…~<8 hex>~` get one more, which keeps the mapping one-to-one for
// any string. Every other key, `~`-keys included, keeps its plain name.
const MARK = '~';
const ESCAPE = '^';
const TAG_LIKE = /^~[0-9a-f]{8}~/;
const NEEDS_ESCAPE = /^\^*~[0-9a-f]{8}~/;
const ESCAPED = /^\^+~[0-9a-f]{8}~/;
// A hashed name keeps a readable prefix of its encoding, always long enough to hold a whole tag.
const ENCODED_MARK = throttledQueueName(MARK).slice(THROTTLED_QUEUE_NAME_PREFIX.length);
const ENCODED_TAG = new RegExp(`^${THROTTLED_QUEUE_NAME_PREFIX}${ENCODED_MARK}[0-9a-f]{8}${ENCODED_MARK}`);

/**
 * Names the domain queues of one manager. Two managers sharing a storage must not share queues,
 * so a manager with its own `persistStateKey` encodes a hash of that key into every queue name;
 * the default key keeps the plain `throttled-<domain>` names. Both go through the same encoding,
 * which keeps names storage-safe (no UUID look-alikes, bounded length).
 */
export class QueueNamespace {
    // `~<hash>~` for a custom key; empty for the default one.
    private readonly tag: string;

    constructor(persistStateKey: string) {
        this.tag =
            persistStateKey === DEFAULTS.persistStateKey
                ? ''
                : `${MARK}${createHash('sha256').update(persistStateKey).digest('hex').slice(0, 8)}${MARK}`;
    }

    /** The queue name of a domain key in this namespace. */
    nameOf(domainKey: string): string {
        if (this.tag !== '') return throttledQueueName(this.tag + domainKey);
        return throttledQueueName(NEEDS_ESCAPE.test(domainKey) ? ESCAPE + domainKey : domainKey);
    }

    /**
     * Whether a stored queue belongs to this namespace, including queues whose names were hashed
     * (very long keys) and so cannot be decoded back to a domain.
     */
    owns(name: string): boolean {
        if (this.domainOf(name) !== undefined) return true;
        if (!isThrottledQueueName(name)) return false;
        if (this.tag === '') return !ENCODED_TAG.test(name);
        return name.startsWith(throttledQueueName(`${this.tag}x`).slice(0, -1));
    }

    /** The domain key behind a queue name of this namespace; undefined for any other name. */
    domainOf(name: string): string | undefined {
        const decoded = domainKeyFromQueueName(name);
        if (decoded === undefined) return undefined;
        if (this.tag === '') {
            if (TAG_LIKE.test(decoded)) return undefined;
            return ESCAPED.test(decoded) ? decoded.slice(ESCAPE.length) : decoded;
        }
        return decoded.startsWith(this.tag) && decoded.length > this.tag.length
            ? decoded.slice(this.tag.length)
            : undefined;
    }
}
