import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { type CrawlRun, runCrawl } from './crawl';
import { formatLive, LivePrinter } from './live';
import { renderReport } from './report';
import { type DemoSite, demoSites } from './sites';
import { type CrawlFigures, crawlFigures, formatSummary } from './summary';

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
    const out = options.stdout ?? process.stdout;
    const say = (text = '') => void out.write(`${text}\n`);
    const timeoutMs = options.timeoutMs ?? 120_000;

    const sites = demoSites(siteCount, pages, options.rate);
    const hosts = sites.map((s) => s.options.host);
    const web = await startPoliteWeb({ sites: sites.map((s) => s.options) });
    try {
        say(`Polite web on ${web.proxyUrl} (proxy; no traffic leaves the machine):`);
        for (const site of sites) say(`  ${site.options.host.padEnd(16)} ${pages} pages, ${site.describe}`);
        say(`Throttler: new ThrottlingRequestManager(${JSON.stringify(DEMO_THROTTLER_OPTIONS)})`);
        say();

        const crawl = async (kind: CrawlRun['kind']) => {
            const printer = new LivePrinter(out);
            const run = await runCrawl(kind, {
                web,
                startUrl: web.url(hosts[0]),
                timeoutMs,
                throttlerOptions: DEMO_THROTTLER_OPTIONS,
                onProgress: options.quiet ? undefined : (view) => printer.show(formatLive(view, hosts)),
            });
            printer.done();
            const figures = crawlFigures(run, pages);
            return { run, figures };
        };

        const throttled = await crawl('throttled');
        const baseline = options.baseline === false ? undefined : await crawl('baseline');

        say('Summary');
        for (const c of [throttled, baseline]) {
            if (!c) continue;
            for (const line of formatSummary(c.run, c.figures)) say(`  ${line}`);
            say();
        }

        const dir = resolve(options.out ?? 'demo-report');
        await mkdir(dir, { recursive: true });
        const reportPath = resolve(dir, 'index.html');
        await writeFile(
            reportPath,
            renderReport({
                generatedAt: new Date(),
                sites,
                pagesPerSite: pages,
                throttlerOptions: DEMO_THROTTLER_OPTIONS,
                throttled,
                baseline,
            }),
        );
        say(`Report: ${reportPath}`);
        return { reportPath, sites, throttled, baseline };
    } finally {
        await web.close();
    }
}
