/** The three kinds of storage Crawlee opens, as they appear in key names. */
export type StorageKind = 'rq' | 'kvs' | 'ds';

/**
 * The keys of one storage. Every key of it carries the same hash tag, `{<prefix>:<kind>:<id>}`, so
 * a script touching several of them runs on one Redis Cluster slot.
 */
export interface StorageKeys {
    /** Hash: id, name, created/modified/accessed times (and a sequence number for queues). */
    meta: string;
    /** Queue: request JSON by id. Store: record bytes by key. Dataset: list of item JSON. */
    data: string;
    /** Queue: zset of pending, unlocked ids scored by order (forefront negative). Store: zset of keys (by name). */
    order: string;
    /** Queue: zset of locked ids scored by lock expiry (Redis ms). */
    locks: string;
    /** Queue: hash id → `<order>|<client key>` of each locked request (where it goes back, who holds it). */
    lockInfo: string;
    /** Queue: zset of the clients that list and lock it, scored by when their latest locks expire (Redis ms). */
    clients: string;
    /** Store: content type by key. */
    types: string;
}

export function storageKeys(prefix: string, kind: StorageKind, id: string): StorageKeys {
    const tag = `{${prefix}:${kind}:${id}}`;
    return {
        meta: `${tag}:meta`,
        data: `${tag}:data`,
        order: `${tag}:order`,
        locks: `${tag}:locks`,
        lockInfo: `${tag}:lockinfo`,
        clients: `${tag}:clients`,
        types: `${tag}:types`,
    };
}

/** The registry of one kind: names to ids, and every id (for `list()`), in one slot of their own. */
export interface RegistryKeys {
    names: string;
    ids: string;
}

export function registryKeys(prefix: string, kind: StorageKind): RegistryKeys {
    const tag = `{${prefix}:${kind}}`;
    return { names: `${tag}:names`, ids: `${tag}:ids` };
}
