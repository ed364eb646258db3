/**
 * Crash and resume with real processes: test/fixtures/crash-crawler.js crawls local hosts, is
 * killed with SIGKILL at seeded random moments and started again on the same storage until it
 * exits 0. Delivery is at least once: every URL is handled, none is lost, and nothing is left in
 * any queue. Needs the built package (packages/throttling/dist): `npm test` builds it first.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { seededRandom, ThrottlingRequestManager } from '../../packages/throttling/src';
import type { TestServer } from '../helpers/servers';
import { startServer } from '../helpers/servers';

const FIXTURE = resolve(__dirname, '..', 'fixtures', 'crash-crawler.js');
const BUILT = resolve(__dirname, '..', '..', 'packages', 'throttling', 'dist', 'index.js');

const SEED = Number(process.env.CRASH_SEED ?? 20_260_101);
const KILLS = 6;
// Even-numbered kills come this long after the child says it starts crawling (module loading
// excluded): they land anywhere, restore and robots.txt checks included.
const KILL_AFTER_START_MS: [number, number] = [300, 1_500];
// Odd-numbered kills come this long after the start handled its first URL: they land mid-crawl
// on any machine, however slow.
const KILL_AFTER_PROGRESS_MS: [number, number] = [50, 600];
const LOCK_SECS = 2;
const MAX_CONCURRENCY = 8;
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
// Hosts refusing every fifth page with 429 + Retry-After: 1.
const REFUSING = new Set(['127.0.0.2', '127.0.0.4']);
const PAGES_PER_HOST = 15;

// A seeded PRNG (the package's own), so a failing schedule can be replayed with CRASH_SEED.
const seeded = seededRandom;

interface Kill {
    after: 'start' | 'progress';
    ms: number;
}

interface Start {
    kill?: Kill;
    handledBefore: number;
    handledAfter: number;
    exit: string;
    /** `*.lock` folders of memory-storage left by the previous (killed) start, cleared first. */
    staleLocks: number;
    /** Request files memory-storage found cut short (and ignored) on this start. */
    truncatedFiles: number;
}

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

async function lines(file: string): Promise<string[]> {
    return existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean) : [];
}

/** Runs the fixture once; kills it as `kill` says (if given). */
function runChild(
    env: NodeJS.ProcessEnv,
    resultsFile: string,
    kill?: Kill,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
    return new Promise((resolveRun, reject) => {
        const { NODE_OPTIONS: _drop, ...inherited } = process.env;
        const child = spawn(process.execPath, [FIXTURE], {
            env: { ...inherited, ...env },
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        let timer: NodeJS.Timeout | undefined;
        let poll: NodeJS.Timeout | undefined;
        const armKill = (ms: number) => {
            timer ??= setTimeout(() => child.kill('SIGKILL'), ms);
        };
        // A hung child fails the test instead of the suite timing out silently.
        const guard = setTimeout(() => child.kill('SIGKILL'), 45_000);
        child.stdout.on('data', (chunk: Buffer) => {
            stdout += chunk.toString();
            if (!kill || !stdout.includes('CRAWL-START') || timer || poll) return;
            if (kill.after === 'start') {
                armKill(kill.ms);
                return;
            }
            const before = existsSync(resultsFile) ? statSync(resultsFile).size : 0;
            poll = setInterval(() => {
                if ((existsSync(resultsFile) ? statSync(resultsFile).size : 0) > before) {
                    clearInterval(poll);
                    armKill(kill.ms);
                }
            }, 10);
        });
        child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
        });
        child.on('error', reject);
        child.on('exit', (code, signal) => {
            clearTimeout(guard);
            clearTimeout(timer);
            clearInterval(poll);
            resolveRun({ code, signal, stdout, stderr });
        });
    });
}

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

    const random = seeded(SEED);
    const storageDir = join(work, 'storage');
    const resultsFile = join(work, 'handled.txt');
    const failedFile = join(work, 'failed.txt');
    const urlsFile = join(work, 'urls.json');
    const urls = servers.flatMap((s) => Array.from({ length: PAGES_PER_HOST }, (_, i) => s.url(`/page/${i + 1}`)));
    await writeFile(urlsFile, JSON.stringify(urls));
    const env = {
        CRAWLEE_STORAGE_DIR: storageDir,
        CRAWLEE_PURGE_ON_START: '0',
        CRASH_URLS_FILE: urlsFile,
        CRASH_RESULTS_FILE: resultsFile,
        CRASH_FAILED_FILE: failedFile,
        CRASH_LOCK_SECS: String(LOCK_SECS),
    };

    const started = Date.now();
    const starts: Start[] = [];
    let kills = 0;
    for (;;) {
        expect(starts.length).toBeLessThan(KILLS + 10);
        let kill: Kill | undefined;
        if (kills < KILLS) {
            const [min, max] = kills % 2 === 0 ? KILL_AFTER_START_MS : KILL_AFTER_PROGRESS_MS;
            kill = { after: kills % 2 === 0 ? 'start' : 'progress', ms: Math.round(min + random() * (max - min)) };
        }
        const handledBefore = (await lines(resultsFile)).length;
        // Stale file locks are cleared on starts that get killed; the last start meets them as they are.
        const { code, signal, stdout, stderr } = await runChild(
            { ...env, CRASH_CLEAR_STALE_LOCKS: kill ? '1' : '0' },
            resultsFile,
            kill,
        );
        starts.push({
            kill,
            handledBefore,
            handledAfter: (await lines(resultsFile)).length,
            exit: signal ?? String(code),
            staleLocks: Number(/STALE-LOCKS (\d+)/.exec(stdout)?.[1] ?? 0),
            truncatedFiles: stderr.split('has invalid JSON content').length - 1,
        });
        if (signal === 'SIGKILL' && kill) {
            kills += 1;
            continue;
        }
        if (code !== 0)
            throw new Error(
                `the crawler exited with ${signal ?? code} (start ${starts.length}):\n${stderr}\n${stdout.slice(-2_000)}`,
            );
        break;
    }
    const durationMs = Date.now() - started;

    const handled = await lines(resultsFile);
    const counts = new Map<string, number>(urls.map((u) => [u, 0]));
    for (const url of handled) counts.set(url, (counts.get(url) ?? 0) + 1);
    const strangers = [...counts.keys()].filter((u) => !urls.includes(u));
    const lost = urls.filter((u) => counts.get(u) === 0);
    const handledTwice = urls.filter((u) => counts.get(u)! > 1).length;
    const failed = await lines(failedFile);
    const pagesSent = servers.reduce((sum, s) => sum + s.pages().length, 0);
    const refused = servers.reduce((sum, s) => sum + s.pages().filter((p) => p.status === 429).length, 0);

    console.log(`CRASH FIGURES ${JSON.stringify({ kills, urls: urls.length, handledTwice, lost: lost.length })}`);
    console.log(
        `crash details ${JSON.stringify({ seed: SEED, starts: starts.length, durationMs, handledLines: handled.length, pagesSent, refused429: refused, failed: failed.length, runs: starts })}`,
    );

    expect(kills).toBeGreaterThanOrEqual(5);
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
    expect(handledTwice).toBeLessThanOrEqual(kills * MAX_CONCURRENCY);

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
