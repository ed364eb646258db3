import { createHash } from 'node:crypto';

import {
    domainKeyFromQueueName,
    isThrottledQueueName,
    THROTTLED_QUEUE_NAME_PREFIX,
    throttledQueueName,
} from './queue-name';

/** The key Crawlee v4's manager uses; managers keeping it get plain `throttled-<domain>` names. */
export const DEFAULT_PERSIST_STATE_KEY = 'CRAWLEE_THROTTLED_DOMAINS';

// A namespaced key is `~<hash>~<domain key>`. No throttling key starts with `~` (they start with a
// hostname), and the queue-name encoding escapes it, so namespaced and plain names never meet.
const MARK = '~';

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
            persistStateKey === DEFAULT_PERSIST_STATE_KEY
                ? ''
                : `${MARK}${createHash('sha256').update(persistStateKey).digest('hex').slice(0, 8)}${MARK}`;
    }

    /** The queue name of a domain key in this namespace. */
    nameOf(domainKey: string): string {
        return throttledQueueName(this.tag + domainKey);
    }

    /**
     * Whether a stored queue belongs to this namespace, including queues whose names were hashed
     * (very long keys) and so cannot be decoded back to a domain.
     */
    owns(name: string): boolean {
        if (this.domainOf(name) !== undefined) return true;
        if (!isThrottledQueueName(name)) return false;
        const encodedMark = throttledQueueName(MARK).slice(THROTTLED_QUEUE_NAME_PREFIX.length);
        if (this.tag === '') return !name.startsWith(THROTTLED_QUEUE_NAME_PREFIX + encodedMark);
        const encodedTag = throttledQueueName(`${this.tag}x`).slice(0, -1);
        return name.startsWith(encodedTag);
    }

    /** The domain key behind a queue name of this namespace; undefined for any other name. */
    domainOf(name: string): string | undefined {
        const decoded = domainKeyFromQueueName(name);
        if (decoded === undefined) return undefined;
        if (this.tag === '') return decoded.startsWith(MARK) ? undefined : decoded;
        return decoded.startsWith(this.tag) && decoded.length > this.tag.length
            ? decoded.slice(this.tag.length)
            : undefined;
    }
}
