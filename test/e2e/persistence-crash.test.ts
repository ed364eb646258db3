/**
 * Crash and resume with real processes: test/fixtures/crash-crawler.js crawls local hosts, is
 * killed with SIGKILL at seeded random moments and started again on the same storage until it
 * exits 0. Nothing is tuned for the test: the crawler's own lock time (65 s) and whatever file-lock
 * folders the kills leave behind. Delivery is at least once: every URL is handled, none is lost,
 * nothing is left in any queue, and each start serves what the killed one had locked at once
 * instead of waiting for its locks to expire. Needs the built package (packages/throttling/dist):
 * `npm test` builds it first.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { seededRandom, ThrottlingRequestManager } from 'crawlee-throttling';
import type { Kill } from '../helpers/crash-runs';
import { crashAndResume } from '../helpers/crash-runs';
import type { TestServer } from '../helpers/servers';
import { startServer } from '../helpers/servers';

const BUILT = resolve(__dirname, '..', '..', 'packages', 'throttling', 'dist', 'index.js');

const SEED = Number(process.env.CRASH_SEED ?? 20_260_101);
const KILLS = 6;
// Even-numbered kills come this long after the child says it starts crawling (module loading
// excluded): they land anywhere, restore and robots.txt checks included.
const KILL_AFTER_START_MS: [number, number] = [300, 1_500];
// Odd-numbered kills come this long after the start handled its first URL: they land mid-crawl
// on any machine, however slow.
const KILL_AFTER_PROGRESS_MS: [number, number] = [50, 600];
// Under the crawler's 65 s lock: a final run that waited for the killed start's locks fails.
const FINAL_LIMIT_MS = 50_000;
// A resumed start hands out its first request within this (module loading excluded); waiting for
// a dead process's locks took 40 s and more.
const FIRST_HANDLED_WITHIN_MS = 15_000;
const MAX_CONCURRENCY = 8;
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
// Hosts refusing every fifth page with 429 + Retry-After: 1.
const REFUSING = new Set(['127.0.0.2', '127.0.0.4']);
const PAGES_PER_HOST = 15;

let servers: TestServer[] = [];
let work: string;

beforeAll(async () => {
    servers = await Promise.all(
        HOSTS.map((host) =>
            startServer({
                host,
                handler: async ({ n }) => {
                    await sleep(20);
                    if (REFUSING.has(host) && n % 5 === 0)
                        return { status: 429, headers: { 'retry-after': '1' }, body: 'slow down' };
                    return {};
                },
            }),
        ),
    );
    work = await mkdtemp(join(tmpdir(), 'throttling-crash-'));
});

afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    if (work) await rm(work, { recursive: true, force: true });
});

/** Every request file left in the storage, with whether it is handled. */
async function storedRequests(storageDir: string): Promise<{ queue: string; url: string; handled: boolean }[]> {
    const root = join(storageDir, 'request_queues');
    const out: { queue: string; url: string; handled: boolean }[] = [];
    for (const queue of await readdir(root).catch(() => [] as string[])) {
        if (queue.startsWith('__CRAWLEE_TEMPORARY')) continue;
        for (const file of await readdir(join(root, queue)).catch(() => [] as string[])) {
            if (!file.endsWith('.json') || file.startsWith('__metadata__') || file.startsWith('.')) continue;
            const text = await readFile(join(root, queue, file), 'utf8');
            const request = JSON.parse(text) as { url: string; orderNo: number | null; json: string };
            const data = JSON.parse(request.json) as { handledAt?: string };
            out.push({ queue, url: request.url, handled: request.orderNo === null && Boolean(data.handledAt) });
        }
    }
    return out;
}

test('SIGKILLed at random moments and resumed until done: every URL handled at least once, none lost, queues empty', async () => {
    expect(existsSync(BUILT)).toBe(true); // run `npm run build` in packages/throttling first

    const random = seededRandom(SEED);
    const urls = servers.flatMap((s) => Array.from({ length: PAGES_PER_HOST }, (_, i) => s.url(`/page/${i + 1}`)));
    const kills: Kill[] = Array.from({ length: KILLS }, (_, i) => {
        const [min, max] = i % 2 === 0 ? KILL_AFTER_START_MS : KILL_AFTER_PROGRESS_MS;
        return { after: i % 2 === 0 ? 'start' : 'progress', ms: Math.round(min + random() * (max - min)) };
    });
    const started = Date.now();
    const run = await crashAndResume({ mode: 'throttler', dir: work, urls, kills, finalLimitMs: FINAL_LIMIT_MS });
    const durationMs = Date.now() - started;
    const { starts, storageDir, handled, failed } = run;
    const killed = starts.filter((s) => s.kill && s.exit === 'SIGKILL').length;

    const counts = new Map<string, number>(urls.map((u) => [u, 0]));
    for (const url of handled) counts.set(url, (counts.get(url) ?? 0) + 1);
    const strangers = [...counts.keys()].filter((u) => !urls.includes(u));
    const lost = urls.filter((u) => counts.get(u) === 0);
    const handledTwice = urls.filter((u) => counts.get(u)! > 1).length;
    const pagesSent = servers.reduce((sum, s) => sum + s.pages().length, 0);
    const refused = servers.reduce((sum, s) => sum + s.pages().filter((p) => p.status === 429).length, 0);

    console.log(
        `CRASH FIGURES ${JSON.stringify({ kills: killed, urls: urls.length, handledTwice, lost: lost.length, finalRunMs: run.final.durationMs, finalFirstHandledMs: run.final.firstHandledMs })}`,
    );
    console.log(
        `crash details ${JSON.stringify({ seed: SEED, starts: starts.length, durationMs, handledLines: handled.length, pagesSent, refused429: refused, failed: failed.length, runs: starts })}`,
    );

    expect(killed).toBeGreaterThanOrEqual(5);
    expect(run.finished).toBe(true);
    // Every start that handled anything began at once: none sat out a dead process's locks.
    for (const start of starts.filter((s) => s.firstHandledMs !== undefined))
        expect(start.firstHandledMs).toBeLessThan(FIRST_HANDLED_WITHIN_MS);
    // Kills landed mid-crawl: every kill timed by progress hit a start that was handling pages,
    // and work was still left for the last start.
    expect(starts.filter((s) => s.kill?.after === 'progress' && s.handledAfter > s.handledBefore)).toHaveLength(
        KILLS / 2,
    );
    expect(starts[starts.length - 1].handledAfter).toBeGreaterThan(starts[starts.length - 1].handledBefore);
    expect(strangers).toEqual([]);
    expect(failed).toEqual([]);
    expect(lost).toEqual([]);
    // At least once, not "again from scratch": a kill can repeat only what was in flight.
    expect(handledTwice).toBeLessThanOrEqual(killed * MAX_CONCURRENCY);

    // Nothing left anywhere: every stored request is handled...
    const stored = await storedRequests(storageDir);
    expect(stored.filter((r) => !r.handled)).toEqual([]);
    expect(new Set(stored.filter((r) => r.queue.startsWith('throttled-')).map((r) => r.url))).toEqual(new Set(urls));

    // ...and a fresh manager on that storage finds nothing to hand out and reports finished.
    const storage = new MemoryStorage({ localDataDirectory: storageDir, persistStorage: true, writeMetadata: false });
    const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
    const manager = new ThrottlingRequestManager({ domains: 'all' }, config);
    expect(await manager.fetchNextRequest()).toBeNull();
    expect(await manager.isFinished()).toBe(true);
    expect(
        manager
            .snapshot()
            .map((s) => s.domain)
            .sort(),
    ).toEqual([...HOSTS].sort());
    await storage.teardown();
}, 110_000);
