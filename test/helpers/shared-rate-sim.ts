import type { Request } from '@crawlee/core';

import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import type { SharedDomainClock, ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { TokenBucket } from '../../packages/polite-web/src/token-bucket';
import { retryAfterValue } from '../../packages/polite-web/src/retry-after';
import { memoryConfig } from './storage';
import { nextReadyAt } from './next-ready-at';
import { respond } from './answer-request';

export const SIM_START = 1_780_000_000_000;
export const SIM_HOST = 'shop.example';

/** One site: a token bucket refusing with 429 and `Retry-After` (whole seconds), answering after `latencyMs`. */
export interface SimSite {
    rate: number;
    burst: number;
    latencyMs: number;
}

/** What several processes sharing one store did to the site. */
export interface SharedSimResult {
    /** Every arrival at the site: when, from which process, refused or not. */
    arrivals: { at: number; process: number; refused: boolean }[];
    /** Pages handled per process. */
    handled: number[];
    managers: ThrottlingRequestManager[];
    clock: ManualClock;
}

interface InFlight {
    process: number;
    request: Request;
    doneAt: number;
    refused: boolean;
    headers: Record<string, string>;
}

/**
 * `processes` managers on one `ManualClock`, each with its own storage and `pagesEach` pages of one
 * token-bucket site, sharing the store `sharedFor(clock)` gives (the same object for all, so every
 * answer is one all see). Each process runs a crawler of `tasks` tasks. No sleeping: the clock jumps to
 * the next answer or ready time. Stops when every page is handled or after `maxSimMs`.
 */
export async function simulateSharedCrawl(settings: {
    processes: number;
    pagesEach: number;
    site: SimSite;
    sharedFor: (clock: ManualClock) => SharedDomainClock;
    options?: Partial<ThrottlingRequestManagerOptions>;
    tasks?: number;
    maxSimMs?: number;
    /** Called after each step of the clock (tuning aids print the learners' state from it). */
    onStep?: (managers: ThrottlingRequestManager[], now: number) => void;
}): Promise<SharedSimResult> {
    const { processes, pagesEach, site, tasks = 4, maxSimMs = 600_000 } = settings;
    const clock = new ManualClock(SIM_START);
    const sharedClock = settings.sharedFor(clock);
    const managers = Array.from(
        { length: processes },
        () =>
            new ThrottlingRequestManager(
                {
                    domains: 'all',
                    clock,
                    respectCrawlDelay: false,
                    maxFreeRetries: 1000,
                    sharedClock,
                    ...settings.options,
                },
                memoryConfig(),
            ),
    );
    for (let p = 0; p < processes; p++) {
        const urls = Array.from({ length: pagesEach }, (_, i) => `https://${SIM_HOST}/page/${p * pagesEach + i}`);
        await managers[p].addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
    }
    const bucket = new TokenBucket(site.rate, site.burst, SIM_START);
    const arrivals: SharedSimResult['arrivals'] = [];
    const inFlight: InFlight[] = [];
    const handled = Array<number>(processes).fill(0);
    const total = processes * pagesEach;
    const arrive = (process: number, request: Request, now: number): InFlight => {
        const refused = !bucket.tryTake(now);
        arrivals.push({ at: now, process, refused });
        if (!refused) return { process, request, doneAt: now + site.latencyMs, refused, headers: {} };
        const headers: Record<string, string> = {};
        const retryAfter = retryAfterValue('seconds', bucket.msUntilToken(now), now);
        if (retryAfter !== undefined) headers['Retry-After'] = retryAfter;
        return { process, request, doneAt: now + 1, refused, headers };
    };
    let turn = 0;
    for (let guard = 0; guard < 1_000_000; guard++) {
        if (handled.reduce((a, b) => a + b, 0) >= total || clock.now() - SIM_START >= maxSimMs) break;
        // The process after the last one served asks first: processes racing for one shared slot each
        // win in turn (with a fixed order, one could lose every race for as long as another had work).
        for (let k = 0, first = turn; k < processes; k++) {
            const p = (k + first) % processes;
            while (inFlight.filter((f) => f.process === p).length < tasks) {
                const request = await managers[p].fetchNextRequest();
                if (!request) break;
                inFlight.push(arrive(p, request, clock.now()));
                turn = p + 1;
            }
        }
        const readyAt = await Promise.all(managers.map(async (m) => (await nextReadyAt(m)) ?? Infinity));
        const next = Math.min(...inFlight.map((f) => f.doneAt), ...readyAt);
        if (!Number.isFinite(next)) throw new Error(`simulation stuck at ${handled.join('/')}`);
        clock.set(Math.max(clock.now() + 1, next));
        settings.onStep?.(managers, clock.now());
        for (const f of inFlight.filter((x) => x.doneAt <= clock.now())) {
            inFlight.splice(inFlight.indexOf(f), 1);
            const response = { statusCode: f.refused ? 429 : 200, headers: f.headers };
            await respond(managers[f.process], f.request, response, f.refused);
            if (!f.refused) handled[f.process] += 1;
        }
    }
    return { arrivals, handled, managers, clock };
}

/** Accepted arrivals per second from `fromMs` after the start to the last arrival, and the share refused then. */
export function steadyPace(arrivals: SharedSimResult['arrivals'], fromMs: number): { pace: number; refused: number } {
    const late = arrivals.filter((a) => a.at >= SIM_START + fromMs);
    if (late.length < 2) return { pace: 0, refused: 0 };
    const accepted = late.filter((a) => !a.refused).length;
    const spanMs = late[late.length - 1].at - late[0].at;
    return { pace: (accepted * 1000) / spanMs, refused: late.filter((a) => a.refused).length / late.length };
}
