import { RequestQueue } from '@crawlee/core';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import {
    DOMAIN_QUEUE_DEDUP_SLOTS,
    DomainRequestQueue,
} from '../../packages/throttling/src/queues/domain-request-queue';
import { memoryConfig } from '../helpers/storage';

const seenCacheSize = (queue: object) => (queue as { requestSeenCache?: { size: number } }).requestSeenCache?.size;

describe('DomainRequestQueue', () => {
    test('is built with a small deduplication cache, and only it: queues opened afterwards keep Crawlee’s', async () => {
        const config = memoryConfig();
        const domainQueue = await DomainRequestQueue.open('throttled-a.example', { config });
        const plain = await RequestQueue.open('plain', { config });

        expect(seenCacheSize(domainQueue)).toBe(DOMAIN_QUEUE_DEDUP_SLOTS);
        expect(seenCacheSize(plain)).toBe(1_000_000);
        expect(domainQueue).toBeInstanceOf(RequestQueue);
        expect(domainQueue.name).toBe('throttled-a.example');
    });

    test('behaves as a RequestQueue: deduplicates, hands out, marks handled, persists under its name', async () => {
        const config = memoryConfig();
        const queue = await DomainRequestQueue.open('throttled-b.example', { config });
        const first = await queue.addRequest({ url: 'http://b.example/1' });
        const again = await queue.addRequest({ url: 'http://b.example/1' });
        expect(first.wasAlreadyPresent).toBe(false);
        expect(again.wasAlreadyPresent).toBe(true);

        const request = await queue.fetchNextRequest();
        expect(request?.url).toBe('http://b.example/1');
        await queue.markRequestHandled(request!);
        expect(await queue.isFinished()).toBe(true);

        // The storage knows it by name: a plain RequestQueue opened by that name sees the same data.
        const reopened = await RequestQueue.open('throttled-b.example', { config });
        expect((await reopened.addRequest({ url: 'http://b.example/1' })).wasAlreadyHandled).toBe(true);
    });

    test('a deduplication cache that forgot a URL still never adds it twice (the storage answers)', async () => {
        const config = memoryConfig();
        const queue = await DomainRequestQueue.open('throttled-c.example', { config });
        // More distinct URLs than slots: early ones are evicted from the cache by collisions.
        const urls = Array.from({ length: DOMAIN_QUEUE_DEDUP_SLOTS * 2 }, (_, i) => ({ url: `http://c.example/${i}` }));
        await queue.addRequests(urls);
        const again = await queue.addRequests(urls);
        expect(again.processedRequests.every((r) => r.wasAlreadyPresent)).toBe(true);
        expect(queue.getTotalCount()).toBe(urls.length);
    });

    test('the manager opens its throttled-<domain> queues as DomainRequestQueues', async () => {
        const config = memoryConfig();
        const open = jest.spyOn(DomainRequestQueue, 'open');
        try {
            const manager = new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain' }, config);
            await manager.addRequest({ url: 'http://d.example/1' });
            const names = open.mock.calls.map(([name]) => name);
            expect(names).toEqual([expect.stringMatching(/^throttled-d\.example/)]);
            const queue = await open.mock.results[0].value;
            expect(seenCacheSize(queue)).toBe(DOMAIN_QUEUE_DEDUP_SLOTS);
        } finally {
            open.mockRestore();
        }
    });
});
