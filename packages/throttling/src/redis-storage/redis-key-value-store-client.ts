import type * as storage from '@crawlee/types';

import type { RedisStorageConnection } from './redis-storage-options';
import { RedisStorageError } from './redis-storage-error';
import { iterablePromise, readMeta } from './storage-meta';
import type { StorageRegistry } from './storage-registry';
import type { StorageKeys } from './storage-keys';
import { storageKeys } from './storage-keys';

/**
 * Crawlee's `KeyValueStoreClient` on Redis: a record's bytes, its content type and its key (for
 * listing in key order) are written in one MULTI, so readers see a record whole or not at all.
 * Values are stored and returned as memory-storage does: objects as JSON, strings as text, bytes as
 * bytes, and parsed back by content type.
 */
export class RedisKeyValueStoreClient implements storage.KeyValueStoreClient {
    // The id once resolved from `idOrName` through the registry.
    private resolvedId?: string;

    constructor(
        private readonly redis: RedisStorageConnection,
        private readonly prefix: string,
        private readonly registry: StorageRegistry,
        // The id or name this client was made for.
        private readonly idOrName: string,
    ) {}

    async get(): Promise<storage.KeyValueStoreInfo | undefined> {
        const keys = await this.keysOrUndefined();
        return keys ? readMeta(this.redis, keys.meta) : undefined;
    }

    async update(newFields: storage.KeyValueStoreClientUpdateOptions): Promise<Partial<storage.KeyValueStoreInfo>> {
        const info = await this.get();
        if (!info) throw this.missing('update');
        if (newFields.name && newFields.name !== info.name)
            await this.registry.rename(info.id, info.name ?? '', newFields.name);
        return (await this.get())!;
    }

    async delete(): Promise<void> {
        const keys = await this.keysOrUndefined();
        if (!keys) return;
        const name = await this.redis.hget(keys.meta, 'name');
        await this.redis.del(keys.meta, keys.data, keys.order, keys.types);
        await this.registry.forget(this.resolvedId!, name ?? '');
    }

    listKeys(
        options: storage.KeyValueStoreClientListOptions = {},
    ): Promise<storage.KeyValueStoreClientListData> & AsyncIterable<storage.KeyValueStoreItemData> {
        return iterablePromise(this.listKeysPage(options), (page) => page.items);
    }

    async recordExists(key: string): Promise<boolean> {
        const keys = await this.requireKeys('recordExists');
        return (await this.redis.hexists(keys.data, key)) === 1;
    }

    async getRecord(
        key: string,
        options: storage.KeyValueStoreClientGetRecordOptions = {},
    ): Promise<storage.KeyValueStoreRecord | undefined> {
        const keys = await this.requireKeys('getRecord');
        const [[, bytes], [, contentType]] = (await this.redis
            .multi()
            .hgetBuffer(keys.data, key)
            .hget(keys.types, key)
            .exec()) as [[unknown, Buffer | null], [unknown, string | null]];
        if (bytes === null) return undefined;
        const type = contentType ?? 'application/octet-stream';
        return { key, contentType: type, value: options.buffer ? bytes : decode(bytes, type) };
    }

    async setRecord(record: storage.KeyValueStoreRecord): Promise<void> {
        if (typeof record?.key !== 'string' || record.key.length === 0)
            throw new RedisStorageError('setRecord: record.key must be a non-empty string');
        const keys = await this.requireKeys('setRecord');
        const { bytes, contentType } = await encode(record.value, record.contentType);
        await this.redis
            .multi()
            .hset(keys.data, record.key, bytes)
            .hset(keys.types, record.key, contentType)
            .zadd(keys.order, 0, record.key)
            .hset(keys.meta, 'modifiedAt', Date.now())
            .exec();
    }

    async deleteRecord(key: string): Promise<void> {
        const keys = await this.requireKeys('deleteRecord');
        await this.redis.multi().hdel(keys.data, key).hdel(keys.types, key).zrem(keys.order, key).exec();
    }

    private async listKeysPage(
        options: storage.KeyValueStoreClientListOptions,
    ): Promise<storage.KeyValueStoreClientListData> {
        const { limit = 1000, exclusiveStartKey, prefix } = options;
        if (!Number.isInteger(limit) || limit < 1)
            throw new RedisStorageError(`listKeys: limit must be an integer >= 1, got ${String(limit)}`);
        const keys = await this.requireKeys('listKeys');
        const from = exclusiveStartKey !== undefined ? `(${exclusiveStartKey}` : prefix ? `[${prefix}` : '-';
        const to = prefix ? `[${prefix}\xff` : '+';
        // One more than asked, to know whether the listing is truncated.
        const names = (await this.redis.zrangebylex(keys.order, from, to, 'LIMIT', 0, limit + 1)).filter(
            (k) => !prefix || k.startsWith(prefix),
        );
        const page = names.slice(0, limit);
        const sizes = page.length ? await Promise.all(page.map((k) => this.redis.hstrlen(keys.data, k))) : [];
        const isTruncated = names.length > limit;
        return {
            count: page.length,
            limit,
            exclusiveStartKey,
            isTruncated,
            nextExclusiveStartKey: isTruncated ? page.at(-1) : undefined,
            items: page.map((key, i) => ({ key, size: sizes[i] })),
        };
    }

    private async requireKeys(what: string): Promise<StorageKeys> {
        const keys = await this.keysOrUndefined();
        if (!keys || !(await this.redis.exists(keys.meta))) throw this.missing(what);
        return keys;
    }

    private missing(what: string): RedisStorageError {
        return new RedisStorageError(`${what}: key-value store ${this.idOrName} does not exist`);
    }

    private async keysOrUndefined(): Promise<StorageKeys | undefined> {
        this.resolvedId ??= await this.registry.resolve(this.idOrName);
        return this.resolvedId === undefined ? undefined : storageKeys(this.prefix, 'kvs', this.resolvedId);
    }
}

/** A value as bytes with its content type, chosen as memory-storage chooses it. */
async function encode(value: unknown, given?: string): Promise<{ bytes: Buffer; contentType: string }> {
    if (value !== null && typeof (value as AsyncIterable<unknown>)?.[Symbol.asyncIterator] === 'function') {
        const chunks: Buffer[] = [];
        for await (const chunk of value as AsyncIterable<Buffer | string>) chunks.push(Buffer.from(chunk));
        return { bytes: Buffer.concat(chunks), contentType: given ?? 'application/octet-stream' };
    }
    if (Buffer.isBuffer(value) || value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
        const bytes = Buffer.isBuffer(value)
            ? value
            : value instanceof ArrayBuffer
              ? Buffer.from(value)
              : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        return { bytes, contentType: given ?? 'application/octet-stream' };
    }
    if (typeof value === 'string')
        return { bytes: Buffer.from(value), contentType: given ?? 'text/plain; charset=utf-8' };
    const contentType = given ?? 'application/json; charset=utf-8';
    if (!/json/i.test(contentType)) return { bytes: Buffer.from(String(value)), contentType };
    try {
        return { bytes: Buffer.from(JSON.stringify(value, null, 2)), contentType };
    } catch (error) {
        throw new RedisStorageError(
            `setRecord: the value cannot be stringified to JSON (${(error as Error).message}); give another contentType`,
        );
    }
}

/** Bytes back to a value by content type: JSON parsed, text as a string, anything else as bytes. */
function decode(bytes: Buffer, contentType: string): unknown {
    if (/json/i.test(contentType)) return JSON.parse(bytes.toString('utf8'));
    if (/^text\//i.test(contentType) || /xml|javascript/i.test(contentType)) return bytes.toString('utf8');
    return bytes;
}
