/**
 * A broad crawl's web and crawler, shared by the broad-crawl tests: many polite-web sites that each
 * ask for a `Crawl-delay` in robots.txt and refuse anything faster, and a real HttpCrawler through a
 * throttler, attached, with every page URL given site after site.
 */
import { ProxyConfiguration } from '@crawlee/core';
import type { Configuration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { scoreLog, startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';
import type { ThrottlingRequestManager } from 'crawlee-throttling';

export interface BroadWebShape {
    /** Host names are `<prefix>-<i>.example`. */
    prefix: string;
    sites: number;
    pages: number;
    crawlDelaySecs: number;
    latencyMs: number;
}

/** Starts the sites: each refuses a request sooner than its crawl delay after the last (burst 1). */
export function startBroadWeb(shape: BroadWebShape): Promise<PoliteWeb> {
    return startPoliteWeb({
        sites: Array.from({ length: shape.sites }, (_, i) => ({
            host: `${shape.prefix}-${i}.example`,
            pages: shape.pages,
            crawlDelay: shape.crawlDelaySecs,
            rate: 1 / shape.crawlDelaySecs,
            burst: 1,
            latencyMs: shape.latencyMs,
        })),
    });
}

/** Crawls every page of every site through `throttler`, and scores the sites' log. */
export async function crawlBroadWeb(
    web: PoliteWeb,
    throttler: ThrottlingRequestManager,
    config: Configuration,
    pages: number,
    onHandled: () => void = () => {},
) {
    const handled: string[] = [];
    const failed: string[] = [];
    const crawler = new HttpCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
            maxConcurrency: 40,
            requestHandler: async ({ request }) => {
                handled.push(request.url);
                onHandled();
            },
            failedRequestHandler: async ({ request }) => {
                failed.push(request.url);
            },
        },
        config,
    );
    throttler.attach(crawler);
    const urls = web.sites.flatMap((site) => Array.from({ length: pages }, (_, p) => web.url(site.host, `/page/${p}`)));
    await crawler.run(urls);
    return { urls, handled, failed };
}

/** The sites whose first request was their robots.txt, and the whole score of the log. */
export function scoreBroadWeb(web: PoliteWeb, pages: number) {
    const score = scoreLog(web.log, web.sites, { pages });
    const robotsFirst = web.sites.filter((site) => web.log.find((e) => e.site === site.host)?.path === '/robots.txt');
    return {
        score,
        robotsFirst: robotsFirst.length,
        robotsReads: web.log.filter((e) => e.path === '/robots.txt').length,
    };
}

/**
 * What a broad crawl under a user's defaults must show: every page handled, none failed, no crawl
 * delay broken, no refusal, and each site's robots.txt read before its pages.
 */
export function expectEveryPagePaced(
    web: PoliteWeb,
    pages: number,
    crawl: { urls: string[]; handled: string[]; failed: string[] },
) {
    const { score, robotsFirst } = scoreBroadWeb(web, pages);
    expect(crawl.failed).toEqual([]);
    expect(new Set(crawl.handled)).toEqual(new Set(crawl.urls));
    expect(score.totals.crawlDelayViolations).toBe(0);
    expect(score.totals.refusals).toBe(0);
    expect(robotsFirst).toBe(web.sites.length);
}
