import { EventEmitter } from 'node:events';

import { BasicCrawler } from '@crawlee/basic';

import { ManualClock } from '../../packages/throttling/src/core/clock';
import { OutagePatience, isOutage } from '../../packages/throttling/src/redis-storage/outage-patience';
import {
    RedisStorageError,
    RedisUnavailableError,
} from '../../packages/throttling/src/redis-storage/redis-storage-error';
import { memoryConfig } from '../helpers/storage';

const named = (name: string, message: string) => Object.assign(new Error(message), { name });

describe('OutagePatience', () => {
    it('tells Redis being away from an answer of Redis', () => {
        expect(isOutage(named('MaxRetriesPerRequestError', 'Reached the max retries per request limit'))).toBe(true);
        expect(isOutage(new Error('Connection is closed.'))).toBe(true);
        expect(isOutage(new Error('connect ECONNREFUSED 127.0.0.1:6379'))).toBe(true);
        expect(isOutage(named('ReplyError', 'LOADING Redis is loading the dataset in memory'))).toBe(true);
        expect(isOutage(named('ReplyError', 'ERR ERR_QUEUE_NOT_FOUND'))).toBe(false);
        expect(isOutage(new RedisStorageError('listAndLockHead: limit must be an integer'))).toBe(false);
    });

    const connection = Object.assign(new EventEmitter(), { status: 'reconnecting' });

    it('passes an answer of Redis on at once, after one attempt', async () => {
        const patience = new OutagePatience(connection, 30_000, new ManualClock());
        const attempt = jest.fn().mockRejectedValue(named('ReplyError', 'ERR ERR_QUEUE_NOT_FOUND'));
        await expect(patience.call('listAndLockHead', attempt)).rejects.toThrow('ERR_QUEUE_NOT_FOUND');
        expect(attempt).toHaveBeenCalledTimes(1);
    });

    it('gives up once outageMs has passed, naming the call, the wait and the cause (seen through a wrapping)', async () => {
        const clock = new ManualClock();
        const patience = new OutagePatience(connection, 0, clock);
        const cause = named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 1)');
        const attempt = jest.fn().mockRejectedValue(new RedisStorageError('listAndLockHead in q', { cause }));
        const failure = patience.call('listAndLockHead of request queue q', attempt);
        await expect(failure).rejects.toThrow(
            'listAndLockHead of request queue q: Redis did not answer for 0 ms (outageMs) (Reached the max retries',
        );
        await expect(failure).rejects.toMatchObject({ cause, code: 'ERR_THROTTLING_REDIS_UNAVAILABLE' });
        await expect(failure).rejects.toBeInstanceOf(RedisUnavailableError);
        expect(attempt).toHaveBeenCalledTimes(1);
    });
});

describe('Redis gone for the crawl', () => {
    // A storage call in a request handler (enqueueLinks, pushData) that meets the outage: Crawlee
    // retries a request whose handler failed, unless the error is critical. Retried, the crawl would
    // go on against a frontier that is not there, or end "successfully" once Redis is back.
    it.each([
        ['gave up after outageMs', 'Redis did not answer for 1000 ms (outageMs)'],
        ['came back without the queue', 'request queue q does not exist (it was there before: …)'],
    ])('ends the crawl from a request handler (%s), with no retry', async (_label, message) => {
        let runs = 0;
        const crawler = new BasicCrawler(
            {
                maxRequestRetries: 3,
                requestHandler: async () => {
                    runs += 1;
                    throw new RedisUnavailableError(`batchAddRequests of request queue q: ${message}`);
                },
            },
            memoryConfig(),
        );
        await expect(crawler.run(['http://a.test/'])).rejects.toBeInstanceOf(RedisUnavailableError);
        // Not retried (4 runs): Crawlee may start the request once more before its pool stops.
        expect(runs).toBeLessThanOrEqual(2);
    });
});
