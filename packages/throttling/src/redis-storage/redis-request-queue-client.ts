import type * as storage from '@crawlee/types';

import type { StorageParts } from './redis-storage-base';
import { RedisStorageBase } from './redis-storage-base';
import { IdlePollBackoff } from './idle-poll-backoff';
import { storageError, RedisStorageError } from './redis-storage-error';
import type { RequestQueueScript } from './request-queue-scripts';
import { requestIdOf } from './request-id';
import type { StorageKeys } from './storage-keys';

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/** At most this many requests per call of `listAndLockHead` (as memory-storage and the Apify API). */
const MAX_LOCK_LIMIT = 25;

/**
 * Crawlee's `RequestQueueClient` on Redis, for many consumers on many machines: a request is
 * locked by the client that lists it (`listAndLockHead`) until it is handled, its lock is deleted,
 * or the lock expires on Redis's clock; an expired lock puts the request back where it was, so a
 * dead worker's requests go to the others. Each change is one script (see request-queue-scripts).
 */
export class RedisRequestQueueClient
    extends RedisStorageBase<storage.RequestQueueInfo>
    implements storage.RequestQueueClient
{
    // Fewer idle polls while other processes hold the whole queue.
    private readonly idlePolls: IdlePollBackoff;

    constructor(
        parts: StorageParts,
        idOrName: string,
        // Whose locks this client takes and may prolong or delete: Crawlee's RequestQueue passes its own key.
        private readonly clientKey: string,
        // Most requests one listAndLockHead locks, whatever the caller asks.
        private readonly lockLimit = MAX_LOCK_LIMIT,
    ) {
        super(parts, 'rq', idOrName);
        this.idlePolls = new IdlePollBackoff(parts.clock);
    }

    protected async info(): Promise<storage.RequestQueueInfo | undefined> {
        const keys = await this.keysOrUndefined();
        if (!keys) return undefined;
        let answer: unknown[];
        try {
            answer = (await this.script('crawleeRqInfo', keys)) as unknown[];
        } catch (error) {
            if (String(error).includes('ERR_QUEUE_NOT_FOUND')) return undefined;
            throw storageError(`get of request queue ${this.idOrName}`, error);
        }
        const [total, pending, , created, modified, accessed, name] = answer.map((v) => (v === null ? '' : String(v)));
        return {
            id: this.resolvedId!,
            name: name || undefined,
            createdAt: new Date(Number(created)),
            modifiedAt: new Date(Number(modified)),
            accessedAt: new Date(Number(accessed)),
            totalRequestCount: Number(total),
            handledRequestCount: Number(total) - Number(pending),
            pendingRequestCount: Number(pending),
            hadMultipleClients: true,
            stats: {},
        };
    }

    async listHead(options: storage.ListOptions = {}): Promise<storage.QueueHead> {
        const limit = checkLimit(options.limit ?? 100, 'listHead', Infinity);
        const [, ...jsons] = (await this.run('listHead', 'crawleeRqListHead', limit)) as unknown[];
        return { limit, queueModifiedAt: new Date(), hadMultipleClients: true, items: jsons.map(parseRequest) };
    }

    async listAndLockHead(options: storage.ListAndLockOptions): Promise<storage.ListAndLockHeadResult> {
        const asked = checkLimit(options.limit ?? MAX_LOCK_LIMIT, 'listAndLockHead', MAX_LOCK_LIMIT);
        const limit = Math.min(asked, this.lockLimit);
        const lockMs = lockMsOf(options.lockSecs, 'listAndLockHead');
        const answer = { limit, lockSecs: options.lockSecs, queueModifiedAt: new Date(), hadMultipleClients: true };
        if (this.idlePolls.quiet()) return { ...answer, queueHasLockedRequests: true, items: [] };
        const [expiresIn, hasLocked, ...jsons] = (await this.run(
            'listAndLockHead',
            'crawleeRqListAndLock',
            limit,
            lockMs,
            this.clientKey,
        )) as unknown[];
        const queueHasLockedRequests = Number(hasLocked) === 1;
        this.idlePolls.polled(jsons.length, queueHasLockedRequests, Number(expiresIn));
        return { ...answer, queueHasLockedRequests, items: jsons.map(parseRequest) };
    }

    async prolongRequestLock(
        id: string,
        options: storage.ProlongRequestLockOptions,
    ): Promise<storage.ProlongRequestLockResult> {
        const lockMs = lockMsOf(options.lockSecs, 'prolongRequestLock');
        const until = await this.run(
            `prolongRequestLock of ${id}`,
            'crawleeRqProlong',
            id,
            lockMs,
            flag(options.forefront),
            this.clientKey,
        );
        return { lockExpiresAt: new Date(Number(until)) };
    }

    async deleteRequestLock(id: string, options: storage.DeleteRequestLockOptions = {}): Promise<void> {
        this.idlePolls.wake();
        await this.run(
            `deleteRequestLock of ${id}`,
            'crawleeRqDeleteLock',
            id,
            flag(options.forefront),
            this.clientKey,
        );
    }

    async addRequest(
        request: storage.RequestSchema,
        options: storage.RequestOptions = {},
    ): Promise<storage.QueueOperationInfo> {
        const { processedRequests } = await this.batchAddRequests([request], options);
        const { requestId, wasAlreadyPresent, wasAlreadyHandled } = processedRequests[0];
        return { requestId, wasAlreadyPresent, wasAlreadyHandled };
    }

    async batchAddRequests(
        requests: storage.RequestSchema[],
        options: storage.RequestOptions = {},
    ): Promise<storage.BatchAddRequestsResult> {
        if (!Array.isArray(requests)) throw new RedisStorageError('batchAddRequests: requests must be an array');
        const models = requests.map((r) => toModel(r, 'batchAddRequests'));
        if (models.length === 0) return { processedRequests: [], unprocessedRequests: [] };
        const args = models.flatMap((m) => [m.id, m.json, flag(m.handled)]);
        this.idlePolls.wake();
        // A batch that cannot reach Redis within outageMs throws rather than come back as
        // unprocessed: Crawlee skips unprocessed requests after three attempts, and they would be lost.
        const answer = (await this.run(
            'batchAddRequests',
            'crawleeRqAdd',
            flag(options.forefront),
            ...args,
        )) as number[];
        const processedRequests = models.map((m, i) => ({
            requestId: m.id,
            uniqueKey: m.uniqueKey,
            wasAlreadyPresent: Number(answer[2 * i]) === 1,
            wasAlreadyHandled: Number(answer[2 * i + 1]) === 1,
        }));
        return { processedRequests, unprocessedRequests: [] };
    }

    async getRequest(id: string): Promise<storage.RequestOptions | undefined> {
        const json = await this.patient(`getRequest of ${id}`, async () =>
            this.redis.hget((await this.queueKeys('getRequest')).data, id),
        );
        return json === null ? undefined : (parseRequest(json) as unknown as storage.RequestOptions);
    }

    async updateRequest(
        request: storage.UpdateRequestSchema,
        options: storage.RequestOptions = {},
    ): Promise<storage.QueueOperationInfo> {
        const model = toModel(request, 'updateRequest');
        this.idlePolls.wake();
        const [present, wasHandled] = (await this.run(
            `updateRequest of ${model.id}`,
            'crawleeRqUpdate',
            model.id,
            model.json,
            flag(model.handled),
            flag(options.forefront),
        )) as number[];
        return {
            requestId: model.id,
            wasAlreadyPresent: Number(present) === 1,
            wasAlreadyHandled: Number(wasHandled) === 1,
        };
    }

    async deleteRequest(id: string): Promise<unknown> {
        return this.run(`deleteRequest of ${id}`, 'crawleeRqDeleteRequest', id);
    }

    /** The queue's keys; a clear error when the queue is not registered (its scripts check the rest). */
    private async queueKeys(what: string): Promise<StorageKeys> {
        const keys = await this.keysOrUndefined();
        if (!keys) throw this.missing(what);
        return keys;
    }

    /** One script on the queue, ridden through an outage; its error replies worded for people. */
    private run(what: string, name: RequestQueueScript, ...args: (string | number)[]): Promise<unknown> {
        return this.patient(what, async () => {
            const keys = await this.queueKeys(what);
            try {
                return await this.script(name, keys, ...args);
            } catch (error) {
                throw storageError(`${what} in request queue ${this.idOrName}`, error);
            }
        });
    }

    private script(name: RequestQueueScript, keys: StorageKeys, ...args: (string | number)[]): Promise<unknown> {
        const call = (this.redis as unknown as Record<string, ScriptCall>)[name];
        return call.call(
            this.redis,
            keys.meta,
            keys.data,
            keys.order,
            keys.locks,
            keys.lockInfo,
            keys.clients,
            ...args,
        );
    }
}

function flag(value: unknown): string {
    return value ? '1' : '0';
}

function checkLimit(limit: unknown, what: string, max: number): number {
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > max)
        throw new RedisStorageError(`${what}: limit must be an integer from 1 to ${max}, got ${String(limit)}`);
    return limit;
}

function lockMsOf(lockSecs: unknown, what: string): number {
    if (typeof lockSecs !== 'number' || !Number.isFinite(lockSecs) || lockSecs < 0)
        throw new RedisStorageError(`${what}: lockSecs must be a number of seconds >= 0, got ${String(lockSecs)}`);
    return Math.round(lockSecs * 1000);
}

interface RequestModel {
    id: string;
    uniqueKey: string;
    json: string;
    handled: boolean;
}

/** Checks a request and derives its id from its unique key (a given id must match it). */
function toModel(request: storage.RequestSchema, what: string): RequestModel {
    if (typeof request !== 'object' || request === null)
        throw new RedisStorageError(`${what}: a request must be an object, got ${String(request)}`);
    const { uniqueKey, url } = request;
    if (typeof uniqueKey !== 'string') throw new RedisStorageError(`${what}: request.uniqueKey must be a string`);
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url))
        throw new RedisStorageError(`${what}: request.url must be an http(s) URL, got ${JSON.stringify(url)}`);
    const id = requestIdOf(uniqueKey);
    if (request.id !== undefined && request.id !== id)
        throw new RedisStorageError(`${what}: request id ${request.id} does not match its uniqueKey (${id})`);
    return { id, uniqueKey, json: JSON.stringify({ ...request, id }), handled: Boolean(request.handledAt) };
}

/** A stored request, without the nulls Crawlee's own storages drop. */
function parseRequest(json: unknown): storage.RequestQueueHeadItem {
    const parsed = JSON.parse(String(json)) as Record<string, unknown>;
    for (const [key, value] of Object.entries(parsed)) if (value === null) delete parsed[key];
    return parsed as unknown as storage.RequestQueueHeadItem;
}
