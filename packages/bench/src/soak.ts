import { monitorEventLoopDelay } from 'node:perf_hooks';

import { memoryConfig } from '@crawlee-throttling/crawler-processes';
import { log, LogLevel, ProxyConfiguration, RequestQueue } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { defaultSites, type PoliteWeb, type SiteOptions, startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { type HeapSample, heapSlopeMbPerMin } from './heap-trend';
import { SoakLedger } from './soak-ledger';
import { collectGarbage, sleep } from './stats';

export interface SoakOptions {
    sites: number;
    /** The first this many sites have no rate limit. */
    unlimitedSites: number;
    /** Pages of each limited site (`/page/0…pages-1`, plus `/`). */
    pages: number;
    /** Pages of each unlimited site: more, so they stay busy as long as the limited ones. */
    unlimitedPages: number;
    latencyMs: number;
    /** Rate and burst of the limited sites while their limit is on. */
    rate: number;
    burst: number;
    onMs: number;
    offMs: number;
    /** Share of page responses cut off by a connection reset, every site. */
    resetShare: number;
    sampleEveryMs: number;
    timeoutMs: number;
}

export interface SoakResult {
    options: SoakOptions;
    ledger: ReturnType<SoakLedger['summary']> & { unexpected: number };
    server: SoakLedger['server'];
    crawlerFinished: number;
    crawlerFailed: number;
    wallMs: number;
    timedOut: boolean;
    heap: HeapSample[];
    heapSlopeSecondHalf: number;
    /** heapUsed after GC per request held by a bare memory-storage RequestQueue, bytes: the floor of growth. */
    bareQueueBytesPerRequest: number;
    /** Requests the server saw in the second half of the run. */
    secondHalfRequests: number;
    /** Distinct URLs enqueued in the second half: what storage had to take on. */
    secondHalfEnqueued: number;
    lagP50Ms: number;
    lagP99Ms: number;
    lagMaxMs: number;
    /**
     * Set when the time cap stopped the crawl: each domain with work left, as the throttler saw it
     * then (times relative to the cap), so a stuck run says where it was stuck.
     */
    atCap?: CapSnapshot[];
}

/** One domain with work left when the time cap fired. */
export interface CapSnapshot {
    domain: string;
    queued: number;
    inFlight: number;
    readyInMs: number;
    intervalMs: number;
    intervalReason: string;
    backoffInMs: number;
    backoffExponent: number;
    refusals: number;
    consecutiveErrors: number;
}

function capSnapshot(throttler: ThrottlingRequestManager): CapSnapshot[] {
    const now = Date.now();
    return throttler
        .snapshot()
        .filter((s) => s.queued > 0 || s.inFlight > 0)
        .map((s) => ({
            domain: s.domain,
            queued: s.queued,
            inFlight: s.inFlight,
            readyInMs: s.readyAt - now,
            intervalMs: s.intervalMs,
            intervalReason: s.intervalReason,
            backoffInMs: s.backoffUntil - now,
            backoffExponent: s.backoffExponent,
            refusals: s.refusals,
            consecutiveErrors: s.consecutiveErrors,
        }));
}

/** Unlimited sites first; the limited ones alternate 429 + Retry-After and 503 without it, their spells staggered. */
export function soakSites(o: SoakOptions): SiteOptions[] {
    const cycle = o.onMs + o.offMs;
    const limited = o.sites - o.unlimitedSites;
    return defaultSites(o.sites, (i) => {
        const common: Partial<SiteOptions> = {
            pages: i < o.unlimitedSites ? o.unlimitedPages : o.pages,
            latencyMs: o.latencyMs,
            connectionResets: { share: o.resetShare, seed: i + 1 },
        };
        if (i < o.unlimitedSites) return { ...common, rate: undefined };
        const k = i - o.unlimitedSites;
        return {
            ...common,
            rate: o.rate,
            burst: o.burst,
            refusal: k % 2 === 0 ? { status: 429, retryAfter: 'seconds' } : { status: 503, retryAfter: 'none' },
            rateLimitSchedule: { onMs: o.onMs, offMs: o.offMs, phaseMs: Math.round((k * cycle) / limited) },
        };
    });
}

/** Heap retained per request by a bare RequestQueue on memory storage (added, fetched, marked handled). */
async function bareQueueBytesPerRequest(n: number): Promise<number> {
    const queue = await RequestQueue.open(null, { config: memoryConfig() });
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < n; i += 500) {
        const urls = Array.from({ length: Math.min(500, n - i) }, (_, j) => `http://site-1.example/page/${i + j}`);
        await queue.addRequests(urls.map((url) => ({ url })));
    }
    for (let r = await queue.fetchNextRequest(); r; r = await queue.fetchNextRequest())
        await queue.markRequestHandled(r);
    collectGarbage();
    const bytes = (process.memoryUsage().heapUsed - before) / n;
    await queue.drop();
    return bytes;
}

const LINK = /<a href="([^"]+)"/g;

function crawler(web: PoliteWeb, ledger: SoakLedger, sites: number) {
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
    const httpCrawler = new HttpCrawler(
        {
            proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
            requestQueue: throttler.asRequestQueue(),
            // Autoscaling would start at one slot and add one every 10 s; a soak wants every site busy from the start.
            minConcurrency: sites,
            maxConcurrency: 2 * sites,
            async requestHandler({ request, body, addRequests }) {
                const urls = [...String(body).matchAll(LINK)].map(
                    (m) => new URL(m[1], request.loadedUrl ?? request.url).href,
                );
                for (const url of urls) ledger.enqueued(url);
                await addRequests(urls);
                ledger.handled(request.url);
            },
            async failedRequestHandler({ request }) {
                ledger.failed(request.url);
            },
        },
        config,
    );
    throttler.attach(httpCrawler);
    return { crawler: httpCrawler, throttler };
}

const LAG_RESOLUTION_MS = 10;
const lagMs = (ns: number): number => Math.max(0, ns / 1e6 - LAG_RESOLUTION_MS);

/** Samples the live heap (after a full GC) with the lag monitor paused, so the induced GC is not counted as lag. */
function startSampler(web: PoliteWeb, ledger: SoakLedger, everyMs: number, started: number) {
    const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
    const heap: HeapSample[] = [];
    const requestsAt: { atMs: number; requests: number; enqueued: number }[] = [];
    const sample = (): void => {
        lag.disable();
        // Folding the server log and starting a new one keeps the in-process server from growing the heap.
        ledger.fold(web.log);
        web.resetLog();
        collectGarbage();
        const atMs = Date.now() - started;
        heap.push({ atMs, heapUsed: process.memoryUsage().heapUsed });
        requestsAt.push({ atMs, requests: ledger.server.requests, enqueued: ledger.distinctEnqueued });
        lag.enable();
    };
    lag.enable();
    const timer = setInterval(sample, everyMs);
    return {
        heap,
        requestsAt,
        lag,
        stop: () => {
            clearInterval(timer);
            sample();
            lag.disable();
        },
    };
}

/** B6: a long crawl of many sites whose limits switch on and off and whose connections break, watching for loss and growth. */
export async function runSoak(o: SoakOptions, progress: (line: string) => void): Promise<SoakResult> {
    const previousLevel = log.getLevel();
    log.setLevel(LogLevel.OFF);
    const web = await startPoliteWeb({ sites: soakSites(o) });
    try {
        const bareBytes = await bareQueueBytesPerRequest(5_000);
        const ledger = new SoakLedger(
            web.sites.map((s) => s.host),
            Math.max(o.pages, o.unlimitedPages),
        );
        const startUrls = web.sites.slice(0, 2).map((s) => web.url(s.host, '/'));
        for (const url of startUrls) ledger.enqueued(url);
        const { crawler: c, throttler } = crawler(web, ledger, o.sites);
        const started = Date.now();
        const sampler = startSampler(web, ledger, o.sampleEveryMs, started);
        const ticker = setInterval(
            () => progress(`B6 ${Math.round((Date.now() - started) / 1000)} s: ${ledger.server.requests} requests`),
            15_000,
        );
        let timedOut = false;
        let atCap: CapSnapshot[] | undefined;
        const cap = setTimeout(() => {
            timedOut = true;
            atCap = capSnapshot(throttler);
            c.stop('benchmark time cap');
        }, o.timeoutMs);
        let finished = 0;
        let failed = 0;
        try {
            const stats = await c.run(startUrls);
            finished = stats.requestsFinished;
            failed = stats.requestsFailed;
        } finally {
            clearTimeout(cap);
            clearInterval(ticker);
        }
        const wallMs = Date.now() - started;
        if (timedOut) await sleep(500);
        sampler.stop();
        return { ...summarize(o, ledger, sampler, { finished, failed, wallMs, timedOut, bareBytes }), atCap };
    } finally {
        log.setLevel(previousLevel);
        await web.close();
    }
}

function summarize(
    o: SoakOptions,
    ledger: SoakLedger,
    sampler: ReturnType<typeof startSampler>,
    run: { finished: number; failed: number; wallMs: number; timedOut: boolean; bareBytes: number },
): SoakResult {
    const { heap, requestsAt, lag } = sampler;
    const half = (requestsAt[requestsAt.length - 1]?.atMs ?? 0) / 2;
    const atHalf = requestsAt.find((r) => r.atMs >= half) ?? { requests: 0, enqueued: 0 };
    return {
        options: o,
        ledger: { ...ledger.summary(), unexpected: ledger.unexpected },
        server: { ...ledger.server },
        crawlerFinished: run.finished,
        crawlerFailed: run.failed,
        wallMs: run.wallMs,
        timedOut: run.timedOut,
        heap,
        heapSlopeSecondHalf: heapSlopeMbPerMin(heap, 0.5),
        bareQueueBytesPerRequest: run.bareBytes,
        secondHalfRequests: ledger.server.requests - atHalf.requests,
        secondHalfEnqueued: ledger.distinctEnqueued - atHalf.enqueued,
        // The histogram records whole timer intervals; the lag is what exceeds the sampling interval.
        lagP50Ms: lagMs(lag.percentile(50)),
        lagP99Ms: lagMs(lag.percentile(99)),
        lagMaxMs: lagMs(lag.max),
    };
}

/** B6 sizes: about three minutes in the full run, a few seconds in quick mode. */
export function soakSizes(quick: boolean): SoakOptions {
    return quick
        ? {
              sites: 4,
              unlimitedSites: 1,
              pages: 15,
              unlimitedPages: 30,
              latencyMs: 5,
              rate: 10,
              burst: 3,
              onMs: 1_000,
              offMs: 1_000,
              resetShare: 0.06,
              sampleEveryMs: 500,
              // Backoffs after resets and 503s set the pace, not the machine: room for a loaded CI run.
              timeoutMs: 150_000,
          }
        : {
              sites: 12,
              unlimitedSites: 4,
              pages: 400,
              unlimitedPages: 800,
              latencyMs: 20,
              rate: 1,
              burst: 2,
              onMs: 20_000,
              offMs: 20_000,
              resetShare: 0.01,
              sampleEveryMs: 5_000,
              timeoutMs: 420_000,
          };
}
