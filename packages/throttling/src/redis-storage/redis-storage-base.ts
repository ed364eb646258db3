import type { Clock } from '../core/clock';
import type { OutagePatience } from './outage-patience';
import type { RedisStorageConnection } from './redis-storage-options';
import { GONE, RedisStorageError, RedisUnavailableError } from './redis-storage-error';
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

/** The keys a storage of each kind is made of: what `delete` removes. */
const KIND_PARTS: Record<StorageKind, (keyof StorageKeys)[]> = {
    rq: ['meta', 'data', 'order', 'locks', 'lockInfo', 'clients'],
    kvs: ['meta', 'data', 'order', 'types'],
    ds: ['meta', 'data'],
};

/**
 * The part the request queue, key-value store and dataset clients share: resolving `idOrName`
 * through the registry to the storage's keys, `get`, `update` (a rename) and `delete`, and riding a
 * call through a Redis outage; each kind reads its own `info`. A storage this client had found and that is then gone was deleted, or lost by a
 * Redis that restarted without persistence; the error says so.
 */
export abstract class RedisStorageBase<Info extends { id: string; name?: string }> {
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

    /** The storage's info; undefined when it does not exist. */
    protected abstract info(): Promise<Info | undefined>;

    get(): Promise<Info | undefined> {
        return this.patient('get', () => this.info());
    }

    update(newFields: { name?: string }): Promise<Partial<Info>> {
        return this.patient('update', async () => {
            const info = await this.info();
            if (!info) throw this.missing('update');
            await this.renameTo(info, newFields.name);
            return (await this.info())!;
        });
    }

    /** Deletes the storage and forgets it in the registry; nothing when it does not exist. */
    delete(): Promise<void> {
        return this.patient('delete', () => this.deleteKeys());
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

    protected missing(what: string): RedisStorageError | RedisUnavailableError {
        const which = `${KIND_NAMES[this.kind]} ${this.idOrName}`;
        if (this.resolvedId === undefined) return new RedisStorageError(`${what}: ${which} does not exist`);
        // Found once, missing now: deleted, or lost with a Redis that kept nothing; the crawl cannot go on.
        return new RedisUnavailableError(`${what}: ${which} does not exist (${GONE})`);
    }

    /** Renames the storage when `newName` differs from its name. */
    private async renameTo(info: { id: string; name?: string }, newName: string | undefined): Promise<void> {
        if (newName && newName !== info.name) await this.parts.registry.rename(info.id, info.name ?? '', newName);
    }

    private async deleteKeys(): Promise<void> {
        const keys = await this.keysOrUndefined();
        if (!keys) return;
        const name = await this.redis.hget(keys.meta, 'name');
        await this.redis.del(...KIND_PARTS[this.kind].map((part) => keys[part]));
        await this.parts.registry.forget(this.resolvedId!, name ?? '');
    }
}
