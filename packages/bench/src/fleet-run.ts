import { join } from 'node:path';

import { runWorker } from '@crawlee-throttling/crawler-processes';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { measureMachine, type MachineUsage } from './machine-usage';
import { WORKER_ENV, type WorkerResult, type WorkerTask } from './redis-crawler-process';
import { sleep } from './stats';
import { steadyPace } from './steady-pace';

/** The compiled worker (also when this module runs from src under jest: build first). */
const WORKER = join(__dirname, '..', 'dist', 'redis-crawler-process.js');

/** One run of B7: N crawler processes against one polite-web, and what the sites and the machine saw. */
export interface FleetRun {
    processes: number;
    shared: boolean;
    requests: number;
    refusals: number;
    handled: number;
    failed: number;
    /** First to last page arrival over all sites, ms. */
    makespanMs: number;
    /** Per site, the smallest gap between arrivals (ms), null with fewer than 2. */
    minGapMs: (number | null)[];
    /** Per site, accepted arrivals per second over the second half of its crawl (see `steadyPace`). */
    steadyPace: (number | null)[];
    /** Most a process started after the agreed moment, ms (0: they all started together). */
    lateMs: number;
    /** Per process: CPU ms, requests in flight (most and mean), and the paces adaptive pacing ended at. */
    workers: Pick<WorkerResult, 'cpuMs' | 'peakConcurrency' | 'meanConcurrency' | 'paces'>[];
    /** The machine from the agreed start to the last process's end (polite-web runs in the bench's own process). */
    machine: MachineUsage;
}

export interface FleetOptions {
    web: PoliteWeb;
    pages: number;
    processes: number;
    /** Omitted: the throttler's default adaptive pacing. */
    delaySecs?: number;
    /** Adaptive pacing off: `delaySecs` alone paces. */
    noRampup?: boolean;
    maxConcurrency: number;
    fixedConcurrency?: boolean;
    redis?: { url: string; keyPrefix: string };
    /** All processes start crawling this long after the first is spawned (they load at different speeds). */
    startInMs: number;
    timeoutMs: number;
}

/**
 * Every page of every site, dealt to `processes` lists: page p of site s goes to process (p + s) mod N,
 * so every process crawls a share of every site at once (pages >= N), and the shares are even over
 * all sites even when N does not divide the pages (by p mod N alone, 5 pages over 4 processes gave
 * the first process 2 of every 5 pages: the crawl could go at most 2.5x as fast as one process).
 */
export function deal(web: Pick<PoliteWeb, 'sites' | 'url'>, pages: number, processes: number): string[][] {
    const lists: string[][] = Array.from({ length: processes }, () => []);
    for (let page = 0; page < pages; page++)
        web.sites.forEach((site, s) => lists[(page + s) % processes].push(web.url(site.host, `/page/${page}`)));
    return lists;
}

/** Runs `processes` crawler processes against a freshly reset `web`, all starting at one moment, and scores it. */
export async function runFleet(o: FleetOptions): Promise<FleetRun> {
    o.web.reset();
    const startAt = Date.now() + o.startInMs;
    // The machine is measured from the agreed start: loading the processes is not part of the crawl.
    const machineDone = sleep(startAt - Date.now()).then(measureMachine);
    const results = await Promise.all(
        deal(o.web, o.pages, o.processes).map((urls, p) =>
            runWorker<WorkerTask, WorkerResult>({
                script: WORKER,
                envName: WORKER_ENV,
                task: {
                    urls,
                    proxyUrl: o.web.proxyUrl,
                    ...(o.delaySecs === undefined ? {} : { delaySecs: o.delaySecs }),
                    ...(o.noRampup ? { noRampup: true } : {}),
                    maxConcurrency: o.maxConcurrency,
                    ...(o.fixedConcurrency ? { fixedConcurrency: true } : {}),
                    sites: o.web.sites.length,
                    startAt,
                    label: String(p + 1),
                    ...(o.redis ? { redis: o.redis } : {}),
                },
                killAfterMs: o.timeoutMs,
                name: `B7 crawler process ${p + 1}`,
            }),
        ),
    );
    const machine = (await machineDone)();
    const score = o.web.score();
    const sum = (pick: (r: WorkerResult) => number) => results.reduce((t, r) => t + pick(r), 0);
    return {
        processes: o.processes,
        shared: o.redis !== undefined,
        requests: score.totals.requests,
        refusals: score.totals.refusals,
        handled: sum((r) => r.handled),
        failed: sum((r) => r.failed),
        makespanMs: score.makespanMs,
        minGapMs: score.sites.map((s) => s.minGapMs),
        steadyPace: score.sites.map((s) => steadyPace(o.web.log, s.host)),
        lateMs: Math.max(...results.map((r) => r.lateMs)),
        workers: results.map(({ cpuMs, peakConcurrency, meanConcurrency, paces }) => ({
            cpuMs,
            peakConcurrency,
            meanConcurrency,
            paces,
        })),
        machine,
    };
}
