import { CheerioCrawler } from '@crawlee/cheerio';
import { log, LogLevel, ProxyConfiguration, RequestQueue } from '@crawlee/core';
import { memoryConfig } from '@crawlee-throttling/crawler-processes';
import type { PoliteWeb, WebScore } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import type { DomainSnapshot, ThrottlingRequestManagerOptions } from 'crawlee-throttling';

/** One request as the server saw it, timed from the start of the crawl. */
export interface TimelineEntry {
    site: string;
    path: string;
    /** ms since the crawl started */
    t: number;
    status: number;
    /** Which crawler process sent it (multi-process mode: its `x-crawler-process` header). */
    client?: string;
}

/** A stretch of time (ms since the crawl started) during which the throttler held a domain back after a refusal. */
export interface BackoffPeriod {
    start: number;
    end: number;
}

/** The pace of one scope at one moment: the rampup rate, or 1 / the interval in force. */
export interface RateSample {
    t: number;
    rate: number;
}

/** The pace a snapshot shows for a scope, requests/s; undefined while unpaced. */
export function paceOf(s: DomainSnapshot): number | undefined {
    if (s.rampup && Number.isFinite(s.rampup.rate)) return s.rampup.rate;
    return s.intervalMs > 0 ? 1000 / s.intervalMs : undefined;
}

/** Everything the summary and the report need about one crawl. */
export interface CrawlRun {
    kind: 'throttled' | 'baseline';
    label: string;
    /** A short name for headings ("with the throttler", "3 processes, one RedisDomainClock"). */
    heading: string;
    /** epoch ms */
    startedAt: number;
    durationMs: number;
    entries: TimelineEntry[];
    /** Backoff periods per domain (empty for the baseline, which has no throttler). */
    backoffs: Record<string, BackoffPeriod[]>;
    /** The pace the throttler set per scope over time (requests/s; ms since the crawl started). */
    rates: Record<string, RateSample[]>;
    score: WebScore;
    requestsFinished: number;
    requestsFailed: number;
    /** The crawl hit the time cap and was stopped. */
    timedOut: boolean;
    /** How many crawler processes shared the crawl (multi-process mode). */
    processes?: number;
}

/** A live view of a crawl, passed to the progress callback once a second. */
export interface LiveView {
    kind: CrawlRun['kind'];
    /** What is crawling (default: with or without the throttler, by `kind`). */
    title?: string;
    elapsedMs: number;
    /** Throttler snapshot (throttled crawl only). */
    snapshot?: readonly DomainSnapshot[];
    /** Per-site counts from the server's log so far. */
    served: Map<string, number>;
    refused: Map<string, number>;
    requests: Map<string, number>;
    /** Per site, requests per crawler process (multi-process mode). */
    byProcess?: Map<string, Map<string, number>>;
    /** How many crawler processes there are (multi-process mode). */
    processes?: number;
}

export interface CrawlOptions {
    web: PoliteWeb;
    startUrl: string;
    /** Called once a second with the state of the crawl; omit for no live output. */
    onProgress?: (view: LiveView) => void;
    /** Stop the crawl after this long. */
    timeoutMs: number;
    /** Options of the throttler (throttled crawl only). */
    throttlerOptions: ThrottlingRequestManagerOptions;
}

const SAMPLE_EVERY_MS = 100;
const PROGRESS_EVERY_MS = 1000;

function isRefusal(status: number): boolean {
    return status === 429 || status === 503;
}

/** Per-site counts of the web's log so far (robots.txt left out). */
export function countLog(web: PoliteWeb): Pick<LiveView, 'served' | 'refused' | 'requests'> {
    const served = new Map<string, number>();
    const refused = new Map<string, number>();
    const requests = new Map<string, number>();
    const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    for (const e of web.log) {
        if (e.path === '/robots.txt') continue;
        bump(requests, e.site);
        if (e.status >= 200 && e.status < 300) bump(served, e.site);
        else if (isRefusal(e.status)) bump(refused, e.site);
    }
    return { served, refused, requests };
}

/** Tracks backoff periods from snapshots: a period runs while `backingOff` is true and ends at `backoffUntil`. */
class BackoffTracker {
    private readonly open = new Map<string, BackoffPeriod>();
    readonly periods: Record<string, BackoffPeriod[]> = {};
    private lastSampleAt = 0;

    constructor(private readonly web: PoliteWeb) {}

    sample(snapshot: readonly DomainSnapshot[], now: number): void {
        for (const s of snapshot) {
            let period = this.open.get(s.domain);
            if (s.backingOff) {
                // A period that ran out between two samples and a new refusal right after it are two periods.
                if (period && period.end < now && s.backoffUntil > period.end) {
                    this.open.delete(s.domain);
                    const start = this.refusalSince(s.domain, period.end) ?? period.end;
                    period = undefined;
                    this.begin(s.domain, start, s.backoffUntil);
                } else if (period) {
                    period.end = Math.max(period.end, s.backoffUntil);
                } else {
                    // The sample is up to 100 ms late: start the period at the refusal that caused it.
                    this.begin(s.domain, this.refusalSince(s.domain, this.lastSampleAt) ?? now, s.backoffUntil);
                }
            } else if (period) {
                this.open.delete(s.domain);
            }
        }
        this.lastSampleAt = now;
    }

    private begin(domain: string, start: number, end: number): void {
        const period = { start, end };
        this.open.set(domain, period);
        (this.periods[domain] ??= []).push(period);
    }

    private refusalSince(domain: string, since: number): number | undefined {
        const log = this.web.log;
        let earliest: number | undefined;
        for (let i = log.length - 1; i >= 0 && log[i].time >= since; i--) {
            if (log[i].site === domain && isRefusal(log[i].status)) earliest = log[i].time;
        }
        return earliest;
    }
}

/** Crawls the web from `startUrl` with a CheerioCrawler, with or without the throttler. */
export async function runCrawl(kind: CrawlRun['kind'], options: CrawlOptions): Promise<CrawlRun> {
    const { web } = options;
    web.reset();
    // Crawlers copy the log level when they are built. The baseline fails requests by design and the
    // throttled crawl retries refusals (a warning each): both would only bury the live table.
    const previousLevel = log.getLevel();
    log.setLevel(kind === 'baseline' ? LogLevel.OFF : LogLevel.ERROR);
    try {
        return await crawlWith(kind, options);
    } finally {
        log.setLevel(previousLevel);
    }
}

async function crawlWith(kind: CrawlRun['kind'], options: CrawlOptions): Promise<CrawlRun> {
    const { web } = options;
    const config = memoryConfig();
    const proxyConfiguration = new ProxyConfiguration({ proxyUrls: [web.proxyUrl] });
    const throttler = kind === 'throttled' ? new ThrottlingRequestManager(options.throttlerOptions, config) : undefined;
    const requestQueue = throttler ? throttler.asRequestQueue() : await RequestQueue.open(null, { config });
    const crawler = new CheerioCrawler(
        {
            requestQueue,
            proxyConfiguration,
            async requestHandler({ enqueueLinks }) {
                await enqueueLinks({ strategy: 'all' });
            },
            // Failures are counted and shown in the summary; Crawlee's log lines would only bury the live table.
            async failedRequestHandler() {},
        },
        config,
    );
    throttler?.attach(crawler);

    const startedAt = Date.now();
    const tracker = new BackoffTracker(web);
    const rates: Record<string, RateSample[]> = {};
    const sampleRates = (snapshot: readonly DomainSnapshot[], now: number) => {
        for (const s of snapshot) {
            const rate = paceOf(s);
            if (rate !== undefined) (rates[s.domain] ??= []).push({ t: now - startedAt, rate });
        }
    };
    const sampler = throttler
        ? setInterval(() => {
              const snapshot = throttler.snapshot();
              tracker.sample(snapshot, Date.now());
              sampleRates(snapshot, Date.now());
          }, SAMPLE_EVERY_MS)
        : undefined;
    const progress = options.onProgress
        ? setInterval(() => {
              options.onProgress!({
                  kind,
                  elapsedMs: Date.now() - startedAt,
                  snapshot: throttler?.snapshot(),
                  ...countLog(web),
              });
          }, PROGRESS_EVERY_MS)
        : undefined;
    let timedOut = false;
    const cap = setTimeout(() => {
        timedOut = true;
        crawler.stop(`The ${kind} crawl hit its ${options.timeoutMs / 1000} s cap.`);
        // A graceful stop waits for running requests; give it a moment, then pull the plug.
        setTimeout(() => void crawler.teardown().catch(() => undefined), 5_000).unref();
    }, options.timeoutMs);

    let stats;
    try {
        stats = await crawler.run([options.startUrl]);
    } finally {
        clearTimeout(cap);
        if (sampler) clearInterval(sampler);
        if (progress) clearInterval(progress);
    }
    const endedAt = Date.now();
    if (throttler) tracker.sample(throttler.snapshot(), endedAt);
    if (options.onProgress)
        options.onProgress({ kind, elapsedMs: endedAt - startedAt, snapshot: throttler?.snapshot(), ...countLog(web) });

    const backoffs: Record<string, BackoffPeriod[]> = {};
    for (const [domain, periods] of Object.entries(tracker.periods)) {
        backoffs[domain] = periods.map((p) => ({
            start: p.start - startedAt,
            end: Math.min(p.end, endedAt) - startedAt,
        }));
    }
    return {
        kind,
        label:
            kind === 'throttled'
                ? 'CheerioCrawler + ThrottlingRequestManager'
                : 'plain CheerioCrawler (Crawlee defaults)',
        heading: kind === 'throttled' ? 'with the throttler' : 'without the throttler',
        startedAt,
        durationMs: endedAt - startedAt,
        entries: web.log.map((e) => ({ site: e.site, path: e.path, t: e.time - startedAt, status: e.status })),
        backoffs,
        rates,
        score: web.score(),
        requestsFinished: stats.requestsFinished,
        requestsFailed: stats.requestsFailed,
        timedOut,
    };
}
