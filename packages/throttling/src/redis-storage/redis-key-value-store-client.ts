import type * as storage from '@crawlee/types';

import { RedisStorageError } from './redis-storage-error';
import type { StorageParts } from './redis-storage-base';
import { RedisStorageBase } from './redis-storage-base';
import { iterablePromise, readMeta } from './storage-meta';

/**
 * Crawlee's `KeyValueStoreClient` on Redis: a record's bytes, its content type and its key (for
 * listing in key order) are written in one MULTI, so readers see a record whole or not at all.
 * Values are stored and returned as memory-storage does: objects as JSON, strings as text, bytes as
 * bytes, and parsed back by content type.
 */
export class RedisKeyValueStoreClient
    extends RedisStorageBase<storage.KeyValueStoreInfo>
    implements storage.KeyValueStoreClient
{
    constructor(parts: StorageParts, idOrName: string) {
        super(parts, 'kvs', idOrName);
    }

    listKeys(
        options: storage.KeyValueStoreClientListOptions = {},
    ): Promise<storage.KeyValueStoreClientListData> & AsyncIterable<storage.KeyValueStoreItemData> {
        return iterablePromise(this.listKeysPage(options), (page) => page.items);
    }

    recordExists(key: string): Promise<boolean> {
        return this.patient('recordExists', async () => {
            const keys = await this.requireKeys('recordExists');
            return (await this.redis.hexists(keys.data, key)) === 1;
        });
    }

    async getRecord(
        key: string,
        options: storage.KeyValueStoreClientGetRecordOptions = {},
    ): Promise<storage.KeyValueStoreRecord | undefined> {
        const [[, bytes], [, contentType]] = await this.patient('getRecord', async () => {
            const keys = await this.requireKeys('getRecord');
            return (await this.redis.multi().hgetBuffer(keys.data, key).hget(keys.types, key).exec()) as [
                [unknown, Buffer | null],
                [unknown, string | null],
            ];
        });
        if (bytes === null) return undefined;
        const type = contentType ?? 'application/octet-stream';
        return { key, contentType: type, value: options.buffer ? bytes : decode(bytes, type) };
    }

    async setRecord(record: storage.KeyValueStoreRecord): Promise<void> {
        if (typeof record?.key !== 'string' || record.key.length === 0)
            throw new RedisStorageError('setRecord: record.key must be a non-empty string');
        const { bytes, contentType } = await encode(record.value, record.contentType);
        await this.patient('setRecord', async () => {
            const keys = await this.requireKeys('setRecord');
            await this.redis
                .multi()
                .hset(keys.data, record.key, bytes)
                .hset(keys.types, record.key, contentType)
                .zadd(keys.order, 0, record.key)
                .hset(keys.meta, 'modifiedAt', Date.now())
                .exec();
        });
    }

    deleteRecord(key: string): Promise<void> {
        return this.patient('deleteRecord', async () => {
            const keys = await this.requireKeys('deleteRecord');
            await this.redis.multi().hdel(keys.data, key).hdel(keys.types, key).zrem(keys.order, key).exec();
        });
    }

    private async listKeysPage(
        options: storage.KeyValueStoreClientListOptions,
    ): Promise<storage.KeyValueStoreClientListData> {
        const { limit = 1000, exclusiveStartKey, prefix } = options;
        if (!Number.isInteger(limit) || limit < 1)
            throw new RedisStorageError(`listKeys: limit must be an integer >= 1, got ${String(limit)}`);
        const from = exclusiveStartKey !== undefined ? `(${exclusiveStartKey}` : prefix ? `[${prefix}` : '-';
        const to = prefix ? `[${prefix}\xff` : '+';
        const { names, sizes } = await this.patient('listKeys', async () => {
            const keys = await this.requireKeys('listKeys');
            // One more than asked, to know whether the listing is truncated.
            const found = (await this.redis.zrangebylex(keys.order, from, to, 'LIMIT', 0, limit + 1)).filter(
                (k) => !prefix || k.startsWith(prefix),
            );
            const shown = found.slice(0, limit);
            return { names: found, sizes: await Promise.all(shown.map((k) => this.redis.hstrlen(keys.data, k))) };
        });
        const page = names.slice(0, limit);
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

    protected async info(): Promise<storage.KeyValueStoreInfo | undefined> {
        const keys = await this.keysOrUndefined();
        return keys ? readMeta(this.redis, keys.meta) : undefined;
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
