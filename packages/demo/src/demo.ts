import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { redisAnswers } from '@crawlee-throttling/crawler-processes';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { type CrawlRun, runCrawl } from './crawl';
import { formatLive, LivePrinter } from './live';
import { DEFAULT_REDIS_URL, processThrottlerOptions, runProcesses } from './processes';
import { type ReportInput, renderReport } from './report';
import { type DemoSite, demoSites } from './sites';
import { type CrawlFigures, crawlFigures, formatSummary } from './summary';

/** The demo cannot run as asked (Redis out of reach): the message says why and what to do. */
export class DemoSetupError extends Error {
    override name = 'DemoSetupError' as const;
}

/**
 * The throttler as the demo sets it up: every domain throttled, told nothing about the limits, with
 * rampup searching each site's rate (the report plots the pace it found). 503 is how site 3 (and
 * every fourth after it) says "slow down"; a 0.5 s first backoff (instead of 2 s) keeps the site
 * that refuses without Retry-After from dominating a short demo.
 */
export const DEMO_THROTTLER_OPTIONS: ThrottlingRequestManagerOptions = {
    domains: 'all',
    backoffStatusCodes: [429, 503],
    baseDelaySecs: 0.5,
    rampup: true,
};

/** Options of {@link runDemo} (and of the `demo` command line). */
export interface DemoOptions {
    /** Number of sites. @default 4 */
    sites?: number;
    /** Pages per site (`/page/0` … `/page/<pages-1>`, plus `/`). @default 25 */
    pages?: number;
    /** Overrides every site's rate (requests/s). */
    rate?: number;
    /** Report directory, resolved against the current directory. @default 'demo-report' */
    out?: string;
    /** Also run the same crawl without the throttler, for contrast. @default true */
    baseline?: boolean;
    /** No live table. @default false */
    quiet?: boolean;
    /** Cap on each crawl, ms. @default 120000 */
    timeoutMs?: number;
    /** Where text output goes. @default process.stdout */
    stdout?: { write(text: string): unknown; isTTY?: boolean };
    /**
     * Crawl with this many crawler processes, each its share of every site's pages; the report marks
     * which process sent each request. More than one needs `redis`. @default 1
     */
    processes?: number;
    /** The processes share one RedisDomainClock; the baseline is the same processes without it. @default false */
    redis?: boolean;
    /** Where that Redis listens. @default REDIS_URL, else 'redis://127.0.0.1:6379' */
    redisUrl?: string;
}

export interface DemoResult {
    /** Absolute path of the HTML report. */
    reportPath: string;
    sites: DemoSite[];
    throttled: { run: CrawlRun; figures: CrawlFigures };
    baseline?: { run: CrawlRun; figures: CrawlFigures };
}

/**
 * Starts a local polite web, crawls it with a CheerioCrawler and the throttler (live table once a
 * second), then without it, prints a summary and writes a self-contained HTML report.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
    const siteCount = options.sites ?? 4;
    const pages = options.pages ?? 25;
    if (!(Number.isInteger(siteCount) && siteCount >= 1))
        throw new RangeError(`sites must be an integer >= 1, got ${siteCount}`);
    if (!(Number.isInteger(pages) && pages >= 1)) throw new RangeError(`pages must be an integer >= 1, got ${pages}`);
    if (options.rate !== undefined && !(Number.isFinite(options.rate) && options.rate > 0))
        throw new RangeError(`rate must be > 0, got ${options.rate}`);
    const processes = options.processes ?? 1;
    if (!(Number.isInteger(processes) && processes >= 1))
        throw new RangeError(`processes must be an integer >= 1, got ${processes}`);
    if (processes > 1 && !options.redis)
        throw new DemoSetupError(
            `--processes ${processes} needs --redis: the processes share their clocks through Redis (the baseline runs them without it).`,
        );
    const redisUrl = options.redisUrl ?? (process.env.REDIS_URL || DEFAULT_REDIS_URL);
    if (options.redis && !(await redisAnswers(redisUrl)))
        throw new DemoSetupError(
            `No Redis answered at ${redisUrl}: --redis needs one that every crawler process reaches. Start one (redis-server, or docker run -p 6379:6379 redis), or point --redis-url (or REDIS_URL) at yours.`,
        );
    const sites = demoSites(siteCount, pages, options.rate);
    const web = await startPoliteWeb({ sites: sites.map((s) => s.options) });
    try {
        const demo = { options, sites, pages, web };
        return options.redis ? await processDemo(demo, processes, redisUrl) : await singleDemo(demo);
    } finally {
        await web.close();
    }
}

interface Demo {
    options: DemoOptions;
    sites: DemoSite[];
    pages: number;
    web: Awaited<ReturnType<typeof startPoliteWeb>>;
}

const say = (options: DemoOptions, text = '') => void (options.stdout ?? process.stdout).write(`${text}\n`);

function introduce(demo: Demo, throttler: string): void {
    say(demo.options, `Polite web on ${demo.web.proxyUrl} (proxy; no traffic leaves the machine):`);
    for (const site of demo.sites)
        say(demo.options, `  ${site.options.host.padEnd(16)} ${demo.pages} pages, ${site.describe}`);
    say(demo.options, throttler);
    say(demo.options);
}

/** One CheerioCrawler that discovers the sites by their links, with the throttler and without. */
async function singleDemo(demo: Demo): Promise<DemoResult> {
    const { options, web, sites, pages } = demo;
    const hosts = sites.map((s) => s.options.host);
    introduce(demo, `Throttler: new ThrottlingRequestManager(${JSON.stringify(DEMO_THROTTLER_OPTIONS)})`);
    const crawl = async (kind: CrawlRun['kind']) => {
        const printer = new LivePrinter(options.stdout ?? process.stdout);
        const run = await runCrawl(kind, {
            web,
            startUrl: web.url(hosts[0]),
            timeoutMs: options.timeoutMs ?? 120_000,
            throttlerOptions: DEMO_THROTTLER_OPTIONS,
            onProgress: options.quiet ? undefined : (view) => printer.show(formatLive(view, hosts)),
        });
        printer.done();
        return { run, figures: crawlFigures(run, pages) };
    };
    const throttled = await crawl('throttled');
    const baseline = options.baseline === false ? undefined : await crawl('baseline');
    return finish(demo, { throttled, baseline, throttlerOptions: DEMO_THROTTLER_OPTIONS });
}

/** `processes` crawler processes, each its share of the pages: sharing one RedisDomainClock, then each alone. */
async function processDemo(demo: Demo, processes: number, redisUrl: string): Promise<DemoResult> {
    const { options, web, sites, pages } = demo;
    const hosts = sites.map((s) => s.options.host);
    const throttlerOptions = processThrottlerOptions(sites);
    introduce(
        demo,
        `${processes} crawler processes, each: new ThrottlingRequestManager(${JSON.stringify(throttlerOptions)}) with sharedClock: new RedisDomainClock({ url: '${redisUrl}' })`,
    );
    const crawl = async (kind: CrawlRun['kind']) => {
        const printer = new LivePrinter(options.stdout ?? process.stdout);
        const run = await runProcesses(kind, {
            ...{ web, sites, pages, processes, throttlerOptions },
            redisUrl: kind === 'throttled' ? redisUrl : undefined,
            timeoutMs: options.timeoutMs ?? 120_000,
            onProgress: options.quiet ? undefined : (view) => printer.show(formatLive(view, hosts)),
        });
        printer.done();
        return { run, figures: crawlFigures(run, pages) };
    };
    const throttled = await crawl('throttled');
    const baseline = options.baseline === false ? undefined : await crawl('baseline');
    const setup = `${processes} CheerioCrawler processes, every page of every site dealt round-robin between them (page j to process j mod ${processes}), each process with its own in-memory storage and the x-crawler-process header; first sharing one RedisDomainClock (${redisUrl}), then (baseline) the same processes each pacing alone.`;
    return finish(demo, { throttled, baseline, throttlerOptions, setup });
}

/** Prints the summary and writes the report. */
async function finish(
    demo: Demo,
    crawls: Pick<ReportInput, 'throttled' | 'baseline' | 'throttlerOptions' | 'setup'>,
): Promise<DemoResult> {
    const { options, sites, pages } = demo;
    say(options, 'Summary');
    for (const c of [crawls.throttled, crawls.baseline]) {
        if (!c) continue;
        for (const line of formatSummary(c.run, c.figures)) say(options, `  ${line}`);
        say(options);
    }
    const dir = resolve(options.out ?? 'demo-report');
    await mkdir(dir, { recursive: true });
    const reportPath = resolve(dir, 'index.html');
    await writeFile(reportPath, renderReport({ generatedAt: new Date(), sites, pagesPerSite: pages, ...crawls }));
    say(options, `Report: ${reportPath}`);
    return { reportPath, sites, throttled: crawls.throttled, baseline: crawls.baseline };
}
