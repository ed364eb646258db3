/**
 * Crash and resume of `queueLayout: 'shared'` against plain Crawlee, measured in one run: both crawl
 * the same local sites on their own storage folders, with the crawler's own lock time (nothing tuned
 * for the test), are SIGKILLed on the same seeded schedule and resumed with purge-on-start off until
 * they finish. Requests of the shared layout live in the default queue (up to `frontierWindow` of
 * them locked at a time, waiting for their domain) and, past a domain's share of the window, in its
 * own `throttled-<domain>` queue; both must come back after a kill. Prints `SHARED CRASH FIGURES`.
 * Needs the built package (packages/throttling/dist): `npm test` builds it first.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Configuration, Request } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { seededRandom, ThrottlingRequestManager } from 'crawlee-throttling';
import type { CrashRunResult, Kill } from '../helpers/crash-runs';
import { crashAndResume } from '../helpers/crash-runs';
import type { TestServer } from '../helpers/servers';
import { startServer } from '../helpers/servers';

const BUILT = resolve(__dirname, '..', '..', 'packages', 'throttling', 'dist', 'index.js');
const SEED = Number(process.env.CRASH_SEED ?? 20_261_515);
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
// Hosts refusing every fifth page with 429 + Retry-After: 1.
const REFUSING = new Set(['127.0.0.3', '127.0.0.5']);
// More than the window's default share per domain (10): every host also gets a queue of its own.
const PAGES_PER_HOST = 30;
const KILLS = 6;
// Plain Crawlee waits out its dead process's locks: its final run is cut here and counted as taking
// at least this long (which only makes the comparison stricter).
const FINAL_LIMIT_MS = 60_000;
// Generous, so a loaded 2-core machine does not flake: the figures are the measurement.
const RATIO = 2;
const SLACK_MS = 10_000;
const FIRST_HANDLED_WITHIN_MS = 15_000;
const MAX_CONCURRENCY = 8;

// Defaults throughout, adaptive pacing included: two of the hosts refuse every fifth page whatever the
// pace, which used to ratchet the pace down restart after restart.

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
    work = await mkdtemp(join(tmpdir(), 'throttling-crash-shared-'));
});

afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    if (work) await rm(work, { recursive: true, force: true });
});

/** Even kills land anywhere after the start (restore included), odd ones mid-crawl. */
function killSchedule(seed: number, count: number): Kill[] {
    const random = seededRandom(seed);
    return Array.from({ length: count }, (_, i) =>
        i % 2 === 0
            ? { after: 'start' as const, ms: Math.round(300 + random() * 1_200) }
            : { after: 'progress' as const, ms: Math.round(50 + random() * 550) },
    );
}

/** Request files a kill left unreadable, by the last call of {@link storedRequests}. */
const unreadable: string[] = [];

/** Every request file left in the storage, with its queue and whether it is handled. */
async function storedRequests(storageDir: string): Promise<{ queue: string; url: string; handled: boolean }[]> {
    const root = join(storageDir, 'request_queues');
    const out: { queue: string; url: string; handled: boolean }[] = [];
    unreadable.length = 0;
    for (const queue of await readdir(root).catch(() => [] as string[])) {
        if (queue.startsWith('__CRAWLEE_TEMPORARY')) continue;
        for (const file of await readdir(join(root, queue)).catch(() => [] as string[])) {
            if (!file.endsWith('.json') || file.startsWith('__metadata__') || file.startsWith('.')) continue;
            const text = await readFile(join(root, queue, file), 'utf8');
            // memory-storage writes a request file in place: a SIGKILL in the middle of that write
            // leaves it empty or cut short (its own crash behaviour, with or without a throttler).
            let request: { url: string; orderNo: number | null; json: string };
            try {
                request = JSON.parse(text) as typeof request;
            } catch {
                unreadable.push(`${queue}/${file}`);
                continue;
            }
            const data = JSON.parse(request.json) as { handledAt?: string };
            out.push({ queue, url: request.url, handled: request.orderNo === null && Boolean(data.handledAt) });
        }
    }
    return out;
}

/** The file name memory-storage gives a request of `url` (its id: a cut sha-256 of the unique key). */
function requestFileOf(url: string): string {
    const id = createHash('sha256')
        .update(new Request({ url }).uniqueKey)
        .digest('base64')
        .replace(/(\+|\/|=)/g, '');
    return `${id.slice(0, 15)}.json`;
}

/** URLs never handled in any start. */
function lostUrls(run: CrashRunResult, urls: string[]): string[] {
    const handled = new Set(run.handled);
    return urls.filter((u) => !handled.has(u));
}

function summary(run: CrashRunResult, urls: string[]) {
    const counts = new Map<string, number>();
    for (const url of run.handled) counts.set(url, (counts.get(url) ?? 0) + 1);
    return {
        finalMs: run.final.durationMs,
        firstHandledMs: run.final.firstHandledMs ?? null,
        finished: run.finished,
        kills: run.starts.filter((s) => s.kill && s.exit === 'SIGKILL').length,
        lost: urls.filter((u) => !counts.has(u)).length,
        handledTwice: urls.filter((u) => (counts.get(u) ?? 0) > 1).length,
        failed: run.failed.length,
        handledInFinal: run.final.handledAfter - run.final.handledBefore,
    };
}

test("queueLayout 'shared' resumed after SIGKILLs with default lock settings: nothing lost, nothing left, as fast as plain Crawlee", async () => {
    expect(existsSync(BUILT)).toBe(true); // run `npm run build` in packages/throttling first
    const urls = servers.flatMap((s) => Array.from({ length: PAGES_PER_HOST }, (_, i) => s.url(`/page/${i + 1}`)));
    const kills = killSchedule(SEED, KILLS);
    const shared = await crashAndResume({
        mode: 'throttler',
        layout: 'shared',
        dir: join(work, 'shared'),
        urls,
        kills,
        finalLimitMs: FINAL_LIMIT_MS,
    });
    const plain = await crashAndResume({
        mode: 'plain',
        dir: join(work, 'plain'),
        urls,
        kills,
        finalLimitMs: FINAL_LIMIT_MS,
    });
    const stored = await storedRequests(shared.storageDir);
    const ownQueues = [...new Set(stored.filter((r) => r.queue.startsWith('throttled-')).map((r) => r.queue))];
    const figures = {
        seed: SEED,
        urls: urls.length,
        plain: summary(plain, urls),
        shared: { ...summary(shared, urls), ownQueues: ownQueues.length, unreadableFiles: unreadable.length },
    };
    console.log(`SHARED CRASH FIGURES ${JSON.stringify(figures)}`);
    console.log(`shared crash details ${JSON.stringify({ plain: plain.starts, shared: shared.starts })}`);

    expect(figures.shared.kills).toBeGreaterThanOrEqual(KILLS - 1);
    expect(shared.finished).toBe(true);
    // Nothing lost, a request whose moved copy a kill emptied included: the start URLs passed again
    // bring it back (moved-requests.ts). The lost URLs and the emptied files are printed either way.
    const lost = lostUrls(shared, urls);
    const cutShort = unreadable.filter((f) => lost.some((u) => f.endsWith(`/${requestFileOf(u)}`)));
    console.log(`SHARED CRASH LOST ${JSON.stringify({ lost, unreadable, cutShort })}`);
    expect(lost).toEqual([]);
    expect(shared.failed).toEqual([]);
    // At least once, not "again from scratch": a kill can repeat only what was in flight.
    expect(figures.shared.handledTwice).toBeLessThanOrEqual(figures.shared.kills * MAX_CONCURRENCY);
    // Every start that handled anything began at once: none sat out a dead process's locks.
    for (const start of shared.starts.filter((s) => s.firstHandledMs !== undefined))
        expect(start.firstHandledMs).toBeLessThan(FIRST_HANDLED_WITHIN_MS);
    expect(figures.shared.finalMs).toBeLessThanOrEqual(RATIO * figures.plain.finalMs + SLACK_MS);

    // The window overflowed into queues of their own, and nothing is left anywhere.
    expect(ownQueues.length).toBeGreaterThan(0);
    expect(stored.filter((r) => !r.handled)).toEqual([]);
    // Every request is stored in the default queue, bar one whose file a kill cut short (never more
    // than one file per kill; the crawl still handled it, as `lost` above says).
    const inDefault = new Set(stored.filter((r) => r.queue === 'default').map((r) => r.url));
    expect([...inDefault].filter((u) => !urls.includes(u))).toEqual([]);
    expect(unreadable.length).toBeLessThanOrEqual(figures.shared.kills);
    expect(inDefault.size + unreadable.filter((f) => f.startsWith('default/')).length).toBe(urls.length);

    // A fresh manager on that storage finds nothing to hand out and reports finished.
    const storage = new MemoryStorage({
        localDataDirectory: shared.storageDir,
        persistStorage: true,
        writeMetadata: false,
    });
    const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
    const manager = new ThrottlingRequestManager({ domains: 'all', queueLayout: 'shared' }, config);
    expect(await manager.fetchNextRequest()).toBeNull();
    expect(await manager.isFinished()).toBe(true);
    await storage.teardown();
}, 300_000);
