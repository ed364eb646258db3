/**
 * Crash and resume when some hosts are not throttled, so their requests live in `inner` (the default
 * queue) beside the throttled hosts' domain queues. Real processes (test/fixtures/crash-crawler.js)
 * on local storage, SIGKILLed on a seeded schedule and started again until done, measured next to
 * an uninterrupted run of the same crawl and to plain Crawlee on the same kills. `inner`'s requests
 * must resume as promptly as the domain queues': a final run that waited out a killed start's locks
 * in `inner` (Crawlee's lock under a crawler: 65 s or more) would not finish within the limit.
 * Prints `INNER CRASH FIGURES {...}`. Needs the built package (packages/throttling/dist).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { seededRandom } from 'crawlee-throttling';
import type { CrashRunResult, Kill } from '../helpers/crash-runs';
import { crashAndResume } from '../helpers/crash-runs';
import type { TestServer } from '../helpers/servers';
import { startServer } from '../helpers/servers';

const BUILT = resolve(__dirname, '..', '..', 'packages', 'throttling', 'dist', 'index.js');
const SEED = Number(process.env.CRASH_SEED ?? 20_261_201);
const KILLS = 5;
const THROTTLED = ['127.0.0.2', '127.0.0.3'];
const UNTHROTTLED = ['127.0.0.4', '127.0.0.5'];
const PAGES_PER_HOST = 15;
// Under the crawler's lock time: a final run that waited for a killed start's locks does not finish.
const FINAL_LIMIT_MS = 50_000;

let servers: TestServer[] = [];
let work: string;

beforeAll(async () => {
    servers = await Promise.all(
        [...THROTTLED, ...UNTHROTTLED].map((host) =>
            startServer({
                host,
                handler: async () => {
                    await sleep(20);
                    return {};
                },
            }),
        ),
    );
    work = await mkdtemp(join(tmpdir(), 'throttling-crash-inner-'));
});

afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    if (work) await rm(work, { recursive: true, force: true });
});

function killSchedule(): Kill[] {
    const random = seededRandom(SEED);
    return Array.from({ length: KILLS }, (_, i) =>
        i % 2 === 0
            ? { after: 'start' as const, ms: Math.round(300 + random() * 1_200) }
            : { after: 'progress' as const, ms: Math.round(50 + random() * 550) },
    );
}

function summary(run: CrashRunResult, urls: string[]) {
    const seen = new Set(run.handled);
    const lostOf = (hosts: string[]) => urls.filter((u) => hosts.includes(new URL(u).hostname) && !seen.has(u)).length;
    return {
        kills: run.starts.filter((s) => s.kill && s.exit === 'SIGKILL').length,
        finished: run.finished,
        lostInner: lostOf(UNTHROTTLED),
        lostDomainQueues: lostOf(THROTTLED),
        finalMs: run.final.durationMs,
        finalFirstHandledMs: run.final.firstHandledMs ?? null,
        handledInFinal: run.final.handledAfter - run.final.handledBefore,
    };
}

test("SIGKILLed and resumed: inner's requests are neither lost nor held by the killed start's locks", async () => {
    expect(existsSync(BUILT)).toBe(true); // run `npm run build` first
    const urls = servers.flatMap((s) => Array.from({ length: PAGES_PER_HOST }, (_, i) => s.url(`/page/${i + 1}`)));
    const kills = killSchedule();
    const options = { urls, finalLimitMs: FINAL_LIMIT_MS, domains: THROTTLED };
    const killed = await crashAndResume({ ...options, mode: 'throttler', dir: join(work, 'killed'), kills });
    const uninterrupted = await crashAndResume({ ...options, mode: 'throttler', dir: join(work, 'whole'), kills: [] });
    const plain = await crashAndResume({ ...options, mode: 'plain', dir: join(work, 'plain'), kills });
    const figures = {
        seed: SEED,
        urls: urls.length,
        innerUrls: UNTHROTTLED.length * PAGES_PER_HOST,
        throttlerKilled: summary(killed, urls),
        throttlerUninterrupted: summary(uninterrupted, urls),
        plainKilled: summary(plain, urls),
    };
    console.log(`INNER CRASH FIGURES ${JSON.stringify(figures)}`);

    expect(figures.throttlerKilled.kills).toBeGreaterThanOrEqual(4);
    expect(figures.throttlerKilled.finished).toBe(true);
    expect(figures.throttlerKilled.lostInner).toBe(0);
    expect(figures.throttlerKilled.lostDomainQueues).toBe(0);
    expect(figures.throttlerUninterrupted.finished).toBe(true);
    expect(figures.throttlerUninterrupted.lostInner + figures.throttlerUninterrupted.lostDomainQueues).toBe(0);
}, 300_000);
