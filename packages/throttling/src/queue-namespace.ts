import { createHash } from 'node:crypto';

import { domainKeyFromQueueName, THROTTLED_QUEUE_NAME_PREFIX, throttledQueueName } from './queue-name';

/** The key Crawlee v4's manager uses; managers keeping it get plain `throttled-<domain>` names. */
export const DEFAULT_PERSIST_STATE_KEY = 'CRAWLEE_THROTTLED_DOMAINS';

// `_k` never starts an encoded domain (escapes are `_` + hex, `_u` or `_h`), so namespaced and
// plain names cannot be confused.
const NAMESPACE_MARKER = '_k';

/**
 * Names the domain queues of one manager. Two managers sharing a storage must not share queues,
 * so a manager with its own `persistStateKey` prefixes its queue names with a hash of that key;
 * the default key keeps the plain `throttled-<domain>` names.
 */
export class QueueNamespace {
    // The part every queue name of this namespace starts with.
    private readonly prefix: string;

    constructor(persistStateKey: string) {
        this.prefix =
            persistStateKey === DEFAULT_PERSIST_STATE_KEY
                ? THROTTLED_QUEUE_NAME_PREFIX
                : `${THROTTLED_QUEUE_NAME_PREFIX}${NAMESPACE_MARKER}${createHash('sha256').update(persistStateKey).digest('hex').slice(0, 8)}-`;
    }

    /** The queue name of a domain key in this namespace. */
    nameOf(domainKey: string): string {
        return this.prefix + throttledQueueName(domainKey).slice(THROTTLED_QUEUE_NAME_PREFIX.length);
    }

    /** The domain key behind a queue name of this namespace; undefined for any other name. */
    domainOf(name: string): string | undefined {
        if (!name.startsWith(this.prefix)) return undefined;
        const rest = name.slice(this.prefix.length);
        if (this.prefix === THROTTLED_QUEUE_NAME_PREFIX && rest.startsWith(NAMESPACE_MARKER)) return undefined;
        return domainKeyFromQueueName(THROTTLED_QUEUE_NAME_PREFIX + rest);
    }
}
