/**
 * A record under `persistStateKey` that cannot be used: the resumed manager warns once (naming the
 * key), starts every clock fresh, still reopens the queues of the earlier run and never throws.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Configuration, log } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

const LOCK_SECS = 1;
const T0 = Date.UTC(2026, 0, 1);
const BACKOFF_MS = 300_000;
const URLS = ['http://a.test/1', 'http://a.test/2', 'http://b.test/1', 'http://b.test/2'];

let dir: string;

beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'throttling-corrupt-'));
});

afterEach(async () => {
    jest.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
});

function openRun() {
    const storage = new MemoryStorage({ localDataDirectory: dir, persistStorage: true, writeMetadata: true });
    const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
    return { storage, config };
}

function newManager(config: Configuration, clock: ManualClock, persistStateKey?: string) {
    const manager = new ThrottlingRequestManager(
        { domains: 'all', clock, maxDelaySecs: 600, ...(persistStateKey ? { persistStateKey } : {}) },
        config,
    );
    manager.requestLockSecs = LOCK_SECS;
    return manager;
}

/**
 * Run 1: queues for a.test and b.test, a.test refused with a 5-minute backoff; saved and flushed.
 * A resumed manager that trusted the clocks would hold a.test back.
 */
async function firstRun(key?: string): Promise<void> {
    const { storage, config } = openRun();
    const manager = newManager(config, new ManualClock(T0), key);
    await manager.addRequestsBatched(URLS, { waitForAllRequestsToBeAdded: true });
    let refused = await manager.fetchNextRequest();
    while (refused && !refused.url.startsWith('http://a.test/')) {
        await manager.reclaimRequest(refused);
        refused = await manager.fetchNextRequest();
    }
    manager.recordPacingSignal({ reason: 'rateLimited', url: refused!.url, waitMs: BACKOFF_MS });
    await manager.reclaimRequest(refused!);
    expect(manager.snapshot().find((s) => s.domain === 'a.test')?.backoffUntil).toBe(T0 + BACKOFF_MS);
    await manager.persistState();
    await storage.teardown();
    // Locks taken by the queue head of run 1 expire before run 2 looks.
    await sleep(LOCK_SECS * 1000 + 150);
}

/** Replaces the record file (and drops its metadata) the way a damaged disk or a bad tool would. */
async function writeRecordFile(key: string, content: string): Promise<void> {
    const store = join(dir, 'key_value_stores', 'default');
    for (const name of await readdir(store)) if (name.startsWith(`${key}.`)) await rm(join(store, name));
    await writeFile(join(store, `${key}.json`), content);
}

/** Every `warning` of every @apify/log logger (the manager's is a child of Crawlee's `log`). */
function spyWarnings() {
    const proto = Object.getPrototypeOf(log) as { warning: (...args: unknown[]) => void };
    const spy = jest.spyOn(proto, 'warning').mockImplementation(() => undefined);
    return {
        all: () => spy.mock.calls.map((call) => String(call[0])),
        fromManager: () =>
            spy.mock.calls
                .filter(
                    (_, i) =>
                        (spy.mock.contexts[i] as { getOptions(): { prefix?: string | null } }).getOptions().prefix ===
                        'ThrottlingRequestManager',
                )
                .map((call) => String(call[0])),
    };
}

async function drain(manager: ThrottlingRequestManager): Promise<string[]> {
    const urls: string[] = [];
    for (let i = 0; i < 100; i++) {
        const request = await manager.fetchNextRequest();
        if (!request) break;
        urls.push(request.url);
        await manager.markRequestHandled(request);
    }
    return urls.sort();
}

describe('the spy on warnings', () => {
    test("catches warnings of child loggers such as the manager's", () => {
        const warnings = spyWarnings();
        log.child({ prefix: 'ThrottlingRequestManager' }).warning('probe');
        log.child({ prefix: 'Other' }).warning('other');
        expect(warnings.fromManager()).toEqual(['probe']);
        expect(warnings.all()).toEqual(['probe', 'other']);
    });
});

describe('a resumed manager facing an unusable record', () => {
    test('control: an intact record restores the backoff (so the cases below can tell the difference)', async () => {
        await firstRun();
        const warnings = spyWarnings();
        const { storage, config } = openRun();
        const manager = newManager(config, new ManualClock(T0 + 1_000));
        expect(await drain(manager)).toEqual(['http://b.test/1', 'http://b.test/2']);
        expect(manager.snapshot().find((s) => s.domain === 'a.test')).toMatchObject({
            backoffUntil: T0 + BACKOFF_MS,
            backingOff: true,
        });
        expect(warnings.fromManager()).toEqual([]);
        await storage.teardown();
    });

    test.each([
        ['a string', JSON.stringify('garbage'), /expected an object, got string/],
        ['a list', JSON.stringify(['a.test', 'b.test']), /expected an object, got a list/],
        ['{version: 99}', JSON.stringify({ version: 99 }), /unknown version 99/],
        [
            'version 1 with a state filed under another domain',
            JSON.stringify({
                version: 1,
                savedAt: T0,
                floorMs: 0,
                domains: ['a.test', 'b.test'],
                states: { x: { domain: 'y' } },
            }),
            /the state of x has a wrong shape/,
        ],
        [
            'version 1 with a negative clock',
            JSON.stringify({
                version: 1,
                savedAt: T0,
                floorMs: 0,
                domains: ['a.test'],
                states: { 'a.test': { domain: 'a.test', backoffUntil: -1 } },
            }),
            /the state of a\.test has a wrong shape/,
        ],
    ])(
        '%s: one warning naming the key, fresh clocks, queues reopened, nothing thrown',
        async (_label, content, reason) => {
            await firstRun();
            await writeRecordFile('CRAWLEE_THROTTLED_DOMAINS', content);
            const warnings = spyWarnings();

            const { storage, config } = openRun();
            const manager = newManager(config, new ManualClock(T0 + 1_000));
            // Every request of run 1 is served, a.test's included: its backoff was not trusted.
            expect(await drain(manager)).toEqual(URLS);
            const a = manager.snapshot().find((s) => s.domain === 'a.test');
            expect(a).toMatchObject({ backoffUntil: 0, refusals: 0 });
            expect(await manager.isFinished()).toBe(true);

            const fromManager = warnings.fromManager();
            expect(fromManager).toHaveLength(1);
            expect(fromManager[0]).toContain('CRAWLEE_THROTTLED_DOMAINS');
            expect(fromManager[0]).toMatch(reason);
            // The manager saved a good record again on finishing: the next resume is clean.
            await storage.teardown();
            const again = openRun();
            const next = newManager(again.config, new ManualClock(T0 + 2_000));
            expect(await next.isFinished()).toBe(true);
            expect(warnings.fromManager()).toHaveLength(1);
            await again.storage.teardown();
        },
    );

    test('a custom persistStateKey is the one named', async () => {
        await firstRun('crawler-b');
        await writeRecordFile('crawler-b', JSON.stringify({ version: 99 }));
        const warnings = spyWarnings();
        const { storage, config } = openRun();
        const manager = newManager(config, new ManualClock(T0 + 1_000), 'crawler-b');
        expect(await drain(manager)).toEqual(URLS);
        expect(warnings.fromManager()).toEqual([expect.stringContaining('crawler-b')]);
        await storage.teardown();
    });

    test('a record cut short by a crash mid-write (invalid JSON): storage skips it, queues still reopened, nothing thrown', async () => {
        await firstRun();
        await writeRecordFile(
            'CRAWLEE_THROTTLED_DOMAINS',
            '{"version":1,"savedAt":1767225600000,"floorMs":0,"domains":["a.te',
        );
        const warnings = spyWarnings();
        const { storage, config } = openRun();
        const manager = newManager(config, new ManualClock(T0 + 1_000));
        expect(await drain(manager)).toEqual(URLS);
        expect(manager.snapshot().find((s) => s.domain === 'a.test')).toMatchObject({ backoffUntil: 0 });
        // memory-storage reports the file and ignores it; to the manager the record is absent, so
        // exactly one warning in all names the key.
        expect(warnings.all().filter((w) => w.includes('CRAWLEE_THROTTLED_DOMAINS'))).toHaveLength(1);
        expect(warnings.fromManager().length).toBeLessThanOrEqual(1);
        await storage.teardown();
    });
});
