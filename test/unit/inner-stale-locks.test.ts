/**
 * Locks a killed process left in `inner` on local storage: requests of unthrottled domains (and those
 * a RequestList tandem moved there) resume at once, as the domain queues' do, instead of waiting out
 * Crawlee's locks. Each "process" is a fresh MemoryStorage on one folder; a finished child's pid is a
 * dead process.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { Configuration, RequestQueue } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { QUEUE_OWNERS_FILE } from '../../packages/throttling/src/queues/queue-owners';

const URLS = Array.from({ length: 30 }, (_, i) => `http://unthrottled.example/${i}`);
let dir: string;
const clients: MemoryStorage[] = [];

beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'throttling-inner-locks-'));
});
afterEach(async () => {
    for (const client of clients.splice(0)) await client.teardown();
    await rm(dir, { recursive: true, force: true });
});

function openProcess(options: Partial<ThrottlingRequestManagerOptions> = {}, ownInner = false) {
    const storage = new MemoryStorage({ localDataDirectory: dir, persistStorage: true, writeMetadata: false });
    clients.push(storage);
    const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
    const inner = ownInner ? () => RequestQueue.open('own-inner', { config }) : undefined;
    const manager = new ThrottlingRequestManager(
        { domains: ['throttled.example'], clock: new ManualClock(), concurrency: 100, inner, ...options },
        config,
    );
    // What a crawler writes onto its request manager: Crawlee's lock time under a crawler.
    manager.requestLockSecs = 65;
    return manager;
}

/** A first process adds the URLs and takes three (the queue locks a batch of 25 on local storage). */
async function crawlAndDie(manager: ThrottlingRequestManager, queueFolder: string): Promise<string[]> {
    await manager.addRequestsBatched(URLS, { waitForAllRequestsToBeAdded: true });
    const taken: string[] = [];
    for (let i = 0; i < 3; i++) taken.push((await manager.fetchNextRequest())!.url);
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    await writeFile(
        join(dir, 'request_queues', queueFolder, QUEUE_OWNERS_FILE),
        JSON.stringify([{ pid: deadPid, host: hostname() }]),
    );
    return taken;
}

async function drain(manager: ThrottlingRequestManager): Promise<string[]> {
    const urls: string[] = [];
    for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
        urls.push(r.url);
        await manager.markRequestHandled(r);
    }
    return urls;
}

test.each([
    ['the default inner queue', false, 'default'],
    ['a RequestQueue given as inner', true, 'own-inner'],
])('%s: what a killed process had locked is handed out at once by the next', async (_name, ownInner, folder) => {
    const inFlight = await crawlAndDie(openProcess({}, ownInner), folder);
    const next = openProcess({}, ownInner);
    const handed = await drain(next);
    expect(handed).toEqual(expect.arrayContaining(inFlight));
    expect(new Set(handed)).toEqual(new Set(URLS));
    expect(await next.isFinished()).toBe(true);
});

test('the shared layout keeps doing it (every request lives in inner there)', async () => {
    const inFlight = await crawlAndDie(openProcess({ queueLayout: 'shared' }), 'default');
    const handed = await drain(openProcess({ queueLayout: 'shared' }));
    expect(handed).toEqual(expect.arrayContaining(inFlight));
    expect(new Set(handed)).toEqual(new Set(URLS));
});
