/**
 * Resume after SIGKILL, throttler against plain Crawlee, measured in one run: both crawl the same
 * local sites on their own storage folders with default lock settings, are killed on the same
 * seeded schedule, and resumed with purge-on-start off. Prints `RESUME FIGURES {...}`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { seededRandom } from 'crawlee-throttling';
import type { CrashRunResult, Kill } from '../helpers/crash-runs';
import { crashAndResume } from '../helpers/crash-runs';
import type { TestServer } from '../helpers/servers';
import { startServer } from '../helpers/servers';

const BUILT = resolve(__dirname, '..', '..', 'packages', 'throttling', 'dist', 'index.js');
const SEED = Number(process.env.CRASH_SEED ?? 20_261_130);
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const PAGES_PER_HOST = Number(process.env.RESUME_PAGES ?? 40);
const KILLS = Number(process.env.RESUME_KILLS ?? 5);
// Plain Crawlee's default queue locks for 180 s and, killed, waits that out: its final run is cut
// here and counted as taking at least this long (which only makes the comparison stricter).
const FINAL_LIMIT_MS = Number(process.env.RESUME_LIMIT_MS ?? 60_000);
// Generous, so a loaded 2-core machine does not flake: the figures are the measurement.
const RATIO = 2;
const SLACK_MS = 10_000;
const FIRST_HANDLED_WITHIN_MS = 15_000;

let servers: TestServer[] = [];
let work: string;

beforeAll(async () => {
    servers = await Promise.all(
        HOSTS.map((host) =>
            startServer({
                host,
                handler: async () => {
                    await sleep(20);
                    return {};
                },
            }),
        ),
    );
    work = await mkdtemp(join(tmpdir(), 'throttling-resume-'));
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

function summary(run: CrashRunResult, urls: string[]) {
    const seen = new Set(run.handled);
    return {
        finalMs: run.final.durationMs,
        firstHandledMs: run.final.firstHandledMs ?? null,
        finished: run.finished,
        kills: run.starts.filter((s) => s.kill && s.exit === 'SIGKILL').length,
        lost: urls.filter((u) => !seen.has(u)).length,
        handledInFinal: run.final.handledAfter - run.final.handledBefore,
        staleLocksAtFinal: run.final.staleLocks,
    };
}

test('resumed after SIGKILLs with default lock settings: the throttler loses nothing and keeps pace with plain Crawlee', async () => {
    expect(existsSync(BUILT)).toBe(true); // run `npm run build` in packages/throttling first
    const urls = servers.flatMap((s) => Array.from({ length: PAGES_PER_HOST }, (_, i) => s.url(`/page/${i + 1}`)));
    const kills = killSchedule(SEED, KILLS);
    const throttled = await crashAndResume({
        mode: 'throttler',
        dir: join(work, 'throttler'),
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
    const figures = { seed: SEED, urls: urls.length, plain: summary(plain, urls), throttler: summary(throttled, urls) };
    console.log(`RESUME FIGURES ${JSON.stringify(figures)}`);
    console.log(`resume details ${JSON.stringify({ plain: plain.starts, throttler: throttled.starts })}`);
    expect(figures.throttler.finished).toBe(true);
    expect(figures.throttler.lost).toBe(0);
    expect(figures.throttler.firstHandledMs).toBeLessThan(FIRST_HANDLED_WITHIN_MS);
    expect(figures.throttler.finalMs).toBeLessThanOrEqual(RATIO * figures.plain.finalMs + SLACK_MS);
}, 300_000);
