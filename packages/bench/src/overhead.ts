import type { IRequestManager } from '@crawlee/core';
import { log, LogLevel, RequestQueue } from '@crawlee/core';
import { getHeapStatistics } from 'node:v8';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { collectGarbage, MemoryPeak, sleep } from './stats';
import { memoryConfig } from './storage';

export interface OverheadOptions {
    domainCounts: number[];
    requests: number;
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
    store: 'RequestQueue' | 'ThrottlingRequestManager';
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
    /** Why the measurement stopped early, if it did. */
    capped: false | 'time' | 'memory';
}

export interface OverheadRow {
    domains: number;
    bare: OverheadMeasurement;
    manager: OverheadMeasurement;
    /** Manager's cost per request over the bare queue's, same run. */
    ratio: number;
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
): Promise<OverheadMeasurement> {
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
        store === 'RequestQueue'
            ? await RequestQueue.open(null, { config })
            : new ThrottlingRequestManager(
                  { domains: 'all', maxThrottledDomains: Math.max(100, domains), respectCrawlDelay: false },
                  config,
              );

    const heapCap = getHeapStatistics().heap_size_limit * heapCapShare;
    const started = performance.now();
    const deadline = started + capMs;
    let added = 0;
    let capped: OverheadMeasurement['capped'] = false;
    while (added < requests) {
        await queue.addRequest({ url: urlOf(added, domains) });
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
    if (store === 'ThrottlingRequestManager') (queue as ThrottlingRequestManager).clearWake();
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
        capped,
    };
}

/** Cost of one request (one add, one fetch, one mark handled); a capped run is costed by the parts it did. */
export function costPerRequestMs(m: OverheadMeasurement): number {
    return m.addMs / Math.max(1, m.added) + m.drainMs / Math.max(1, m.completed);
}

/** add + fetch + mark handled through the manager vs a bare RequestQueue, per domain count. */
export async function runOverhead(options: OverheadOptions, progress: (line: string) => void): Promise<OverheadRow[]> {
    const previousLevel = log.getLevel();
    log.setLevel(LogLevel.ERROR);
    const heapCapShare = options.heapCapShare ?? 0.5;
    try {
        // Warm both paths up so the first measured row does not pay for JIT compilation.
        await measure('RequestQueue', 10, Math.min(1000, options.requests), options.capMs, heapCapShare);
        await measure('ThrottlingRequestManager', 10, Math.min(1000, options.requests), options.capMs, heapCapShare);
        const rows: OverheadRow[] = [];
        for (const domains of options.domainCounts) {
            progress(`B3 ${domains} domains: bare RequestQueue …`);
            const bare = await measure('RequestQueue', domains, options.requests, options.capMs, heapCapShare);
            progress(`B3 ${domains} domains: ThrottlingRequestManager …`);
            const manager = await measure(
                'ThrottlingRequestManager',
                domains,
                options.requests,
                options.capMs,
                heapCapShare,
            );
            const ratio = costPerRequestMs(manager) / costPerRequestMs(bare);
            progress(
                `B3 ${domains} domains: bare ${bare.totalMs.toFixed(0)} ms, manager ${manager.totalMs.toFixed(0)} ms${manager.capped ? ` (${manager.capped} cap after ${manager.added} adds, ${manager.completed} handled)` : ''}, ratio ${ratio.toFixed(2)}`,
            );
            rows.push({ domains, bare, manager, ratio });
        }
        return rows;
    } finally {
        log.setLevel(previousLevel);
    }
}
