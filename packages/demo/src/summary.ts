import type { SiteScore } from '@crawlee-throttling/polite-web';

import type { CrawlRun } from './crawl';
import { percent, seconds, textTable } from './format';
import { processCounts } from './live';

/** Per-site figures of one crawl, as shown in the summary and the report. */
export interface SiteFigures {
    host: string;
    /** Distinct pages served 2xx, and pages the site has (`/` included). */
    pages: number;
    pagesTotal: number;
    requests: number;
    refusals: number;
    refusedShare: number;
    /** First to last request of the site, ms. */
    makespanMs: number;
}

export interface CrawlFigures {
    sites: SiteFigures[];
    total: SiteFigures;
    durationMs: number;
    requestsFailed: number;
    timedOut: boolean;
}

function siteFigures(s: SiteScore, pagesTotal: number): SiteFigures {
    return {
        host: s.host,
        pages: s.distinctPagesServed,
        pagesTotal,
        requests: s.requests,
        refusals: s.refusals,
        refusedShare: s.refusedShare,
        makespanMs: s.firstAt === null || s.lastAt === null ? 0 : s.lastAt - s.firstAt,
    };
}

/** Figures of a crawl; `pagesPerSite` is each site's page count (without `/`). */
export function crawlFigures(run: CrawlRun, pagesPerSite: number): CrawlFigures {
    const sites = run.score.sites.map((s) => siteFigures(s, pagesPerSite + 1));
    const t = run.score.totals;
    return {
        sites,
        total: {
            host: 'total',
            pages: t.distinctPagesServed,
            pagesTotal: sites.reduce((sum, s) => sum + s.pagesTotal, 0),
            requests: t.requests,
            refusals: t.refusals,
            refusedShare: t.refusedShare,
            makespanMs: run.score.makespanMs,
        },
        durationMs: run.durationMs,
        requestsFailed: run.requestsFailed,
        timedOut: run.timedOut,
    };
}

/** The summary table of one crawl, as text lines. */
export function formatSummary(run: CrawlRun, figures: CrawlFigures): string[] {
    const byProcess = countsByProcess(run);
    const row = (f: SiteFigures) => [
        f.host,
        `${f.pages}/${f.pagesTotal}`,
        String(f.requests),
        String(f.refusals),
        percent(f.refusedShare),
        seconds(f.makespanMs),
        ...(byProcess
            ? [processCounts(f.host === 'total' ? byProcess.total : byProcess.sites.get(f.host), run.processes)]
            : []),
    ];
    const notes = [`crawl took ${seconds(figures.durationMs)}`, `${figures.requestsFailed} request(s) failed`];
    if (figures.timedOut) notes.push('stopped at the time cap');
    return [
        `${run.label}: ${notes.join(', ')}`,
        ...textTable(
            ['site', 'pages', 'requests', 'refusals', 'refused', 'makespan', ...(byProcess ? ['by process'] : [])],
            [...figures.sites.map(row), row(figures.total)],
            [0, 6],
        ),
    ];
}

/** Page requests per crawler process, per site and in all; undefined when no request names its process. */
function countsByProcess(run: CrawlRun) {
    const sites = new Map<string, Map<string, number>>();
    const total = new Map<string, number>();
    for (const e of run.entries) {
        if (e.client === undefined || e.path === '/robots.txt') continue;
        const site = sites.get(e.site) ?? new Map<string, number>();
        site.set(e.client, (site.get(e.client) ?? 0) + 1);
        sites.set(e.site, site);
        total.set(e.client, (total.get(e.client) ?? 0) + 1);
    }
    return total.size > 0 ? { sites, total } : undefined;
}
