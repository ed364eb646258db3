import type { Clock } from '../core/clock';
import type { OutagePatience } from './outage-patience';
import type { RedisStorageConnection } from './redis-storage-options';
import { GONE, RedisStorageError } from './redis-storage-error';
import type { StorageRegistry } from './storage-registry';
import type { StorageKeys, StorageKind } from './storage-keys';
import { storageKeys } from './storage-keys';

/** What every storage client of one kind shares: the connection, the prefix, the registry, the patience, the clock. */
export interface StorageParts {
    redis: RedisStorageConnection;
    prefix: string;
    registry: StorageRegistry;
    patience: OutagePatience;
    /** This process's time, for waits (Redis decides every lock by its own TIME). */
    clock: Clock;
}

const KIND_NAMES: Record<StorageKind, string> = { rq: 'request queue', kvs: 'key-value store', ds: 'dataset' };

/**
 * The part the request queue, key-value store and dataset clients share: resolving `idOrName`
 * through the registry to the storage's keys, renaming, deleting, and riding a call through a
 * Redis outage. A storage this client had found and that is then gone was deleted, or lost by a
 * Redis that restarted without persistence; the error says so.
 */
export abstract class RedisStorageBase {
    // The id once `idOrName` is resolved through the registry (a name opened elsewhere included).
    protected resolvedId?: string;

    protected constructor(
        protected readonly parts: StorageParts,
        private readonly kind: StorageKind,
        // The id or name this client was made for.
        protected readonly idOrName: string,
    ) {}

    protected get redis(): RedisStorageConnection {
        return this.parts.redis;
    }

    /** Runs one storage call, made again while Redis is away (see OutagePatience). */
    protected patient<T>(what: string, call: () => Promise<T>): Promise<T> {
        return this.parts.patience.call(`${what} of ${KIND_NAMES[this.kind]} ${this.idOrName}`, call);
    }

    protected async keysOrUndefined(): Promise<StorageKeys | undefined> {
        this.resolvedId ??= await this.parts.registry.resolve(this.idOrName);
        return this.resolvedId === undefined ? undefined : storageKeys(this.parts.prefix, this.kind, this.resolvedId);
    }

    /** The storage's keys once its metadata is there; a clear error otherwise. */
    protected async requireKeys(what: string): Promise<StorageKeys> {
        const keys = await this.keysOrUndefined();
        if (!keys || !(await this.redis.exists(keys.meta))) throw this.missing(what);
        return keys;
    }

    protected missing(what: string): RedisStorageError {
        const which = `${KIND_NAMES[this.kind]} ${this.idOrName}`;
        // Found once, missing now: deleted, or lost with a Redis that kept nothing.
        const why = this.resolvedId === undefined ? '' : ` (${GONE})`;
        return new RedisStorageError(`${what}: ${which} does not exist${why}`);
    }

    /** Renames the storage when `newName` differs from its name. */
    protected async renameTo(info: { id: string; name?: string }, newName: string | undefined): Promise<void> {
        if (newName && newName !== info.name) await this.parts.registry.rename(info.id, info.name ?? '', newName);
    }

    /** Deletes the storage's `parts` and forgets it in the registry; nothing when it does not exist. */
    protected async deleteKeys(parts: (keyof StorageKeys)[]): Promise<void> {
        const keys = await this.keysOrUndefined();
        if (!keys) return;
        const name = await this.redis.hget(keys.meta, 'name');
        await this.redis.del(...parts.map((part) => keys[part]));
        await this.parts.registry.forget(this.resolvedId!, name ?? '');
    }
}
