/**
 * Locks a killed process left in a domain queue on local storage. Each "process" is a fresh
 * MemoryStorage and Configuration on one folder; which processes run is real (a finished child's
 * pid is a dead process, this test's parent a live one), only the owners record names them.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { DomainRequestQueue } from '../../packages/throttling/src/queues/domain-request-queue';
import { QUEUE_OWNERS_FILE } from '../../packages/throttling/src/queues/queue-owners';

const NAME = 'throttled-a.example';
const URLS = Array.from({ length: 30 }, (_, i) => `http://a.example/${i}`);

let dir: string;

beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'throttling-stale-locks-'));
});

afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
});

/** What a new process on `dir` builds. */
function openProcess(): { storage: MemoryStorage; config: Configuration } {
    const storage = new MemoryStorage({ localDataDirectory: dir, persistStorage: true, writeMetadata: false });
    return {
        storage,
        config: new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true }),
    };
}

/** A first process adds the URLs and fetches (locks) `fetch` of them with the crawler's 65 s lock. */
async function crawlAndDie(fetch: number): Promise<string[]> {
    const { config } = openProcess();
    const queue = await DomainRequestQueue.open(NAME, { config });
    queue.requestLockSecs = 65;
    await queue.addRequests(URLS.map((url) => ({ url })));
    const taken: string[] = [];
    for (let i = 0; i < fetch; i++) taken.push((await queue.fetchNextRequest())!.url);
    return taken;
}

function deadPid(): number {
    return spawnSync(process.execPath, ['-e', '']).pid!;
}

async function recordOwners(pids: number[]): Promise<void> {
    const owners = pids.map((pid) => ({ pid, host: hostname() }));
    await writeFile(join(dir, 'request_queues', NAME, QUEUE_OWNERS_FILE), JSON.stringify(owners));
}

/** Fetches until the queue hands out nothing more. */
async function drain(queue: DomainRequestQueue): Promise<string[]> {
    const urls: string[] = [];
    for (;;) {
        const request = await queue.fetchNextRequest();
        if (!request) return urls;
        urls.push(request.url);
        await queue.markRequestHandled(request);
    }
}

test('a queue reopened after its only owner died hands out at once what that process had locked', async () => {
    const inFlight = await crawlAndDie(3);
    await recordOwners([deadPid()]);

    const { config } = openProcess();
    const queue = await DomainRequestQueue.open(NAME, { config });
    expect(await queue.staleLockRelease).toEqual({ requests: 25, lockFolders: 0, skipped: false });
    const handed = await drain(queue);
    expect(handed).toEqual(expect.arrayContaining(inFlight));
    expect(new Set(handed)).toEqual(new Set(URLS));
    expect(await queue.isFinished()).toBe(true);
});

test('file-lock folders a killed write left in the queue folder are removed with the locks', async () => {
    await crawlAndDie(1);
    await recordOwners([deadPid()]);
    const file = (await readdir(join(dir, 'request_queues', NAME))).find(
        (f) => f.endsWith('.json') && !f.startsWith('.'),
    )!;
    await mkdir(join(dir, 'request_queues', NAME, `${file}.lock`));

    const { config } = openProcess();
    const queue = await DomainRequestQueue.open(NAME, { config });
    expect((await queue.staleLockRelease)?.lockFolders).toBe(1);
    expect(new Set(await drain(queue))).toEqual(new Set(URLS));
});

test('locks are left alone while another process recorded on the queue still runs', async () => {
    await crawlAndDie(1);
    await recordOwners([deadPid(), process.ppid]);

    const { config } = openProcess();
    const queue = await DomainRequestQueue.open(NAME, { config });
    expect(await queue.staleLockRelease).toEqual({ requests: 0, lockFolders: 0, skipped: true });
    // The live process's 25 stay locked; the other 5 are served.
    expect(await drain(queue)).toHaveLength(URLS.length - 25);
    // The record keeps the live process and adds this one; the dead one is dropped.
    const owners = JSON.parse(await readFile(join(dir, 'request_queues', NAME, QUEUE_OWNERS_FILE), 'utf8')) as {
        pid: number;
    }[];
    expect(owners.map((o) => o.pid)).toEqual([process.ppid, process.pid]);
});

test('a queue opened twice in one process is not released under its own feet', async () => {
    const { config } = openProcess();
    const queue = await DomainRequestQueue.open(NAME, { config });
    queue.requestLockSecs = 65;
    await queue.addRequests(URLS.map((url) => ({ url })));
    await queue.fetchNextRequest();

    // Another manager of this process, on its own storage client over the same folder.
    const other = await DomainRequestQueue.open(NAME, { config: openProcess().config });
    expect(await other.staleLockRelease).toEqual({ requests: 0, lockFolders: 0, skipped: true });
});
