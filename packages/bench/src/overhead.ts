import type { Configuration, IRequestManager } from '@crawlee/core';
import { log, LogLevel, RequestQueue } from '@crawlee/core';
import { getHeapStatistics } from 'node:v8';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { collectGarbage, MemoryPeak, sleep } from './stats';
import { memoryConfig } from './storage';

/** What B3 measures: the bare queue, and the manager in each queue layout. */
export type OverheadStore = 'RequestQueue' | ManagerLayout;
export type ManagerLayout = 'perDomain' | 'shared';
export const MANAGER_LAYOUTS: readonly ManagerLayout[] = ['perDomain', 'shared'];

/** One B3 row: `domains` domains, `requests` requests spread over them round-robin. */
export interface OverheadSize {
    domains: number;
    requests: number;
    /** Time cap of each measurement of the row. */
    capMs: number;
    /** A shorter cap for a layout known to be slow at this size (it is costed by the part it did). */
    layoutCapMs?: Partial<Record<ManagerLayout, number>>;
    /**
     * Measurements of the row, each of the bare queue then every layout, taken one after the other so
     * that a change in the machine's load hits a round's baseline too. @default 1
     */
    rounds?: number;
    /**
     * Add every request with `forefront: true`. memory-storage lists a queue's head by walking it from
     * the front, handled requests included, so a drain of N requests costs O(N²) in every store; forefront
     * requests are walked from their own index, newest first, which keeps 300,000 requests to minutes.
     */
    forefront?: boolean;
}

export interface OverheadOptions {
    /** Rows of `requests` requests each (one per domain round-robin). */
    domainCounts: number[];
    requests: number;
    /** Rounds of each of those rows (see {@link OverheadSize.rounds}). @default 1 */
    rounds?: number;
    /** Further rows with their own sizes, e.g. 100,000 domains × 3 requests (`--broad`). */
    extraRows?: OverheadSize[];
    /** Stop a measurement after this long and report the part done. */
    capMs: number;
    /**
     * Stop a measurement when heapUsed passes this share of V8's heap limit (instead of crashing the
     * process) and report the part done.
     * @default 0.5
     */
    heapCapShare?: number;
}

export interface OverheadMeasurement {
    store: OverheadStore;
    domains: number;
    /** Requests asked for. */
    requests: number;
    /** Requests added, and the ones fetched and marked handled, before the cap (if any). */
    added: number;
    completed: number;
    addMs: number;
    drainMs: number;
    totalMs: number;
    /** Fetches that came back empty while work remained (the loop then yields and tries again). */
    emptyFetches: number;
    peakRssMb: number;
    /** Peak heapUsed above the heap at the start of the measurement. */
    peakHeapDeltaMb: number;
    /**
     * heapUsed after a full GC at the end, every request handled and the store still alive, above
     * the start: what an idle crawl of this size keeps.
     */
    retainedHeapMb: number;
    /** Why the measurement stopped early, if it did. */
    capped: false | 'time' | 'memory';
}

/** The manager in one layout, against the bare queue of the same row. */
export interface LayoutMeasurement {
    layout: ManagerLayout;
    m: OverheadMeasurement;
    /** Its cost per request over the bare queue's of the same round, the median over the rounds. */
    ratio: number;
    /** That ratio in each round. */
    ratios: number[];
    /** Peak heap above the bare queue's, per domain, in bytes. */
    peakHeapPerDomainB: number;
    /** Heap kept once idle (after GC) above the bare queue's, per domain, in bytes. */
    retainedPerDomainB: number;
}

export interface OverheadRow {
    domains: number;
    requests: number;
    rounds: number;
    /** The bare queue's measurement with the median cost; each layout's likewise. */
    bare: OverheadMeasurement;
    layouts: LayoutMeasurement[];
}

const MB = 2 ** 20;

function urlOf(i: number, domains: number): string {
    return `http://d${i % domains}.bench.example/r/${i}`;
}

async function measure(
    store: OverheadMeasurement['store'],
    domains: number,
    requests: number,
    capMs: number,
    heapCapShare: number,
    forefront = false,
): Promise<OverheadMeasurement> {
    // Collected from a fresh task: an error created late in the previous measurement can keep that
    // measurement's store alive from the stack it was created on (its call sites hold their receivers).
    await sleep(20);
    collectGarbage();
    await sleep(20);
    const config = memoryConfig();
    // Every RequestQueue adds listeners to its configuration's event manager; with one queue per domain
    // the emitter would warn about a leak at 51 queues. The count is expected here, so raise the limit.
    (
        config.getEventManager() as unknown as { events?: { setMaxListeners?(n: number): void } }
    ).events?.setMaxListeners?.(0);
    const memory = new MemoryPeak();
    const queue: IRequestManager =
        store === 'RequestQueue' ? await RequestQueue.open(null, { config }) : managerFor(store, domains, config);

    const heapCap = getHeapStatistics().heap_size_limit * heapCapShare;
    const started = performance.now();
    const deadline = started + capMs;
    let added = 0;
    let capped: OverheadMeasurement['capped'] = false;
    while (added < requests) {
        await queue.addRequest({ url: urlOf(added, domains) }, forefront ? { forefront } : undefined);
        added++;
        // Checked often: a new domain may cost megabytes (see the B3 notes), and running out of heap kills the run.
        if ((added & 15) === 0) {
            memory.sample();
            if (memory.peakHeap > heapCap) capped = 'memory';
            else if (performance.now() > deadline) capped = 'time';
            if (capped) break;
        }
    }
    const addedAt = performance.now();
    memory.sample();

    let completed = 0;
    let emptyFetches = 0;
    while (completed < added) {
        const request = await queue.fetchNextRequest();
        if (!request) {
            emptyFetches++;
            if (emptyFetches > 10_000)
                throw new Error(
                    `${store}: fetchNextRequest keeps returning null with ${added - completed} requests left`,
                );
            await sleep(0);
            continue;
        }
        await queue.markRequestHandled(request);
        completed++;
        if ((completed & 255) === 255) {
            memory.sample();
            if (performance.now() > deadline) {
                capped ||= 'time';
                break;
            }
        }
    }
    const ended = performance.now();
    memory.sample();
    if (queue instanceof ThrottlingRequestManager) queue.clearWake();
    await sleep(20);
    collectGarbage();
    const retainedHeapMb = (process.memoryUsage().heapUsed - memory.startHeap) / MB;
    // Alive up to here, so the figure above counts what it keeps.
    if (queue.getTotalCount() < 0) throw new Error('unreachable');
    return {
        store,
        domains,
        requests,
        added,
        completed,
        addMs: addedAt - started,
        drainMs: ended - addedAt,
        totalMs: ended - started,
        emptyFetches,
        peakRssMb: memory.peakRss / MB,
        peakHeapDeltaMb: (memory.peakHeap - memory.startHeap) / MB,
        retainedHeapMb,
        capped,
    };
}

/**
 * The manager under test: `'perDomain'` with room for every domain (its default of 100 would throw),
 * `'shared'` with its defaults (10,000 domains kept, idle ones evicted past that).
 */
function managerFor(layout: ManagerLayout, domains: number, config: Configuration): ThrottlingRequestManager {
    const options =
        layout === 'perDomain'
            ? { domains: 'all' as const, maxThrottledDomains: Math.max(100, domains), respectCrawlDelay: false }
            : { domains: 'all' as const, queueLayout: 'shared' as const, respectCrawlDelay: false };
    return new ThrottlingRequestManager(options, config);
}

/** Cost of one request (one add, one fetch, one mark handled); a capped run is costed by the parts it did. */
export function costPerRequestMs(m: OverheadMeasurement): number {
    return m.addMs / Math.max(1, m.added) + m.drainMs / Math.max(1, m.completed);
}

/** add + fetch + mark handled through the manager in each layout vs a bare RequestQueue, per row. */
export async function runOverhead(options: OverheadOptions, progress: (line: string) => void): Promise<OverheadRow[]> {
    const previousLevel = log.getLevel();
    log.setLevel(LogLevel.ERROR);
    const heapCapShare = options.heapCapShare ?? 0.5;
    const sizes: OverheadSize[] = [
        ...options.domainCounts.map((domains) => ({
            domains,
            requests: options.requests,
            capMs: options.capMs,
            rounds: options.rounds,
        })),
        ...(options.extraRows ?? []),
    ];
    try {
        // Warm every path up so the first measured row does not pay for JIT compilation.
        for (const store of ['RequestQueue', ...MANAGER_LAYOUTS] as const) {
            await measure(store, 10, Math.min(1000, options.requests), options.capMs, heapCapShare);
        }
        const rows: OverheadRow[] = [];
        for (const size of sizes) rows.push(await measureRow(size, heapCapShare, progress));
        return rows;
    } finally {
        log.setLevel(previousLevel);
    }
}

async function measureRow(
    size: OverheadSize,
    heapCapShare: number,
    progress: (line: string) => void,
): Promise<OverheadRow> {
    const { domains, requests, capMs, layoutCapMs, forefront } = size;
    const rounds = size.rounds ?? 1;
    const label = `B3 ${domains} domains × ${requests} requests`;
    const bares: OverheadMeasurement[] = [];
    const runs = new Map<ManagerLayout, { m: OverheadMeasurement; ratio: number }[]>(
        MANAGER_LAYOUTS.map((l) => [l, []]),
    );
    for (let round = 1; round <= rounds; round++) {
        const of = rounds > 1 ? ` (round ${round}/${rounds})` : '';
        progress(`${label}: bare RequestQueue${of} …`);
        const bare = await measure('RequestQueue', domains, requests, capMs, heapCapShare, forefront);
        bares.push(bare);
        for (const layout of MANAGER_LAYOUTS) {
            progress(`${label}: manager, ${layout}${of} …`);
            const cap = layoutCapMs?.[layout] ?? capMs;
            const m = await measure(layout, domains, requests, cap, heapCapShare, forefront);
            const ratio = costPerRequestMs(m) / costPerRequestMs(bare);
            runs.get(layout)!.push({ m, ratio });
            progress(
                `${label}${of}: bare ${bare.totalMs.toFixed(0)} ms, ${layout} ${m.totalMs.toFixed(0)} ms${m.capped ? ` (${m.capped} cap after ${m.added} adds, ${m.completed} handled)` : ''}, ratio ${ratio.toFixed(2)}`,
            );
        }
    }
    const bare = medianBy(bares, costPerRequestMs);
    const layouts = MANAGER_LAYOUTS.map((layout): LayoutMeasurement => {
        const done = runs.get(layout)!;
        const m = medianBy(
            done.map((d) => d.m),
            costPerRequestMs,
        );
        const perDomain = (mb: number) => (mb * MB) / Math.max(1, Math.min(domains, m.added));
        return {
            layout,
            m,
            ratio: median(done.map((d) => d.ratio)),
            ratios: done.map((d) => d.ratio),
            peakHeapPerDomainB: perDomain(m.peakHeapDeltaMb - bare.peakHeapDeltaMb),
            retainedPerDomainB: perDomain(m.retainedHeapMb - bare.retainedHeapMb),
        };
    });
    return { domains, requests, rounds, bare, layouts };
}

function median(values: readonly number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** The item whose `key` is the median (the lower one of an even count). */
function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
    const sorted = [...items].sort((a, b) => key(a) - key(b));
    return sorted[Math.floor((sorted.length - 1) / 2)];
}
