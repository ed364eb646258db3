import { randomUUID } from 'node:crypto';

import type { RedisStorageConnection } from './redis-storage-options';
import type { StorageKind } from './storage-keys';
import { registryKeys, storageKeys } from './storage-keys';
import { RedisStorageError } from './redis-storage-error';

/** KEYS: names, ids. ARGV: name ('' for none), a fresh id. Answers the name's id (the fresh one if new). */
const REGISTER = `
local name, id = ARGV[1], ARGV[2]
if name ~= '' then
  local known = redis.call('HGET', KEYS[1], name)
  if known then return known end
  redis.call('HSET', KEYS[1], name, id)
end
redis.call('HSET', KEYS[2], id, name)
return id
`;

/** KEYS: meta. ARGV: id, name. Creates the storage's metadata unless it exists (idempotent). */
const CREATE_META = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'createdAt', now, 'modifiedAt', now, 'accessedAt', now)
return 1
`;

/** KEYS: names, ids. ARGV: id, old name, new name. Renames; 0 when the new name is taken. */
const RENAME = `
if redis.call('HSETNX', KEYS[1], ARGV[3], ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '' then redis.call('HDEL', KEYS[1], ARGV[2]) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
`;

export const REGISTRY_SCRIPTS = {
    crawleeStorageRegister: { numberOfKeys: 2, lua: REGISTER },
    crawleeStorageCreateMeta: { numberOfKeys: 1, lua: CREATE_META },
    crawleeStorageRename: { numberOfKeys: 2, lua: RENAME },
} as const;

type Call = (...args: string[]) => Promise<unknown>;

/**
 * Names and ids of the storages of one kind, shared by every process on the Redis: opening a name
 * anywhere gets the same id, so two processes opening `throttled-example.com` share one queue.
 */
export class StorageRegistry {
    constructor(
        private readonly redis: RedisStorageConnection,
        private readonly prefix: string,
        private readonly kind: StorageKind,
    ) {}

    /** The id registered for `idOrName` (a name, or an id itself), or undefined. */
    async resolve(idOrName: string): Promise<string | undefined> {
        const keys = registryKeys(this.prefix, this.kind);
        const byName = await this.redis.hget(keys.names, idOrName);
        if (byName !== null) return byName;
        return (await this.redis.hexists(keys.ids, idOrName)) ? idOrName : undefined;
    }

    /** Opens the storage named `name` (a new unnamed one without), creating it if needed; answers its id. */
    async getOrCreate(name: string | undefined): Promise<string> {
        const keys = registryKeys(this.prefix, this.kind);
        const id = String(await this.call('crawleeStorageRegister')(keys.names, keys.ids, name ?? '', randomUUID()));
        await this.call('crawleeStorageCreateMeta')(storageKeys(this.prefix, this.kind, id).meta, id, name ?? '');
        return id;
    }

    /** Every registered id with its name ('' for none). */
    async list(): Promise<{ id: string; name: string }[]> {
        const all = await this.redis.hgetall(registryKeys(this.prefix, this.kind).ids);
        return Object.entries(all).map(([id, name]) => ({ id, name }));
    }

    async rename(id: string, oldName: string, newName: string): Promise<void> {
        const keys = registryKeys(this.prefix, this.kind);
        const done = await this.call('crawleeStorageRename')(keys.names, keys.ids, id, oldName, newName);
        if (!done) throw new RedisStorageError(`Cannot rename storage ${id} to "${newName}": that name is taken`);
        await this.redis.hset(storageKeys(this.prefix, this.kind, id).meta, 'name', newName);
    }

    /** Forgets `id` (and its name) after its keys were deleted. */
    async forget(id: string, name: string): Promise<void> {
        const keys = registryKeys(this.prefix, this.kind);
        if (name) await this.redis.hdel(keys.names, name);
        await this.redis.hdel(keys.ids, id);
    }

    private call(name: keyof typeof REGISTRY_SCRIPTS): Call {
        return (this.redis as unknown as Record<string, Call>)[name].bind(this.redis);
    }
}
