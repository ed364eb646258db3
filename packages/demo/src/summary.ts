import type { SiteScore } from '@crawlee-throttling/polite-web';

import type { CrawlRun } from './crawl';
import { percent, seconds, textTable } from './format';

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
    const row = (f: SiteFigures) => [
        f.host,
        `${f.pages}/${f.pagesTotal}`,
        String(f.requests),
        String(f.refusals),
        percent(f.refusedShare),
        seconds(f.makespanMs),
    ];
    const notes = [`crawl took ${seconds(figures.durationMs)}`, `${figures.requestsFailed} request(s) failed`];
    if (figures.timedOut) notes.push('stopped at the time cap');
    return [
        `${run.label}: ${notes.join(', ')}`,
        ...textTable(
            ['site', 'pages', 'requests', 'refusals', 'refused', 'makespan'],
            [...figures.sites.map(row), row(figures.total)],
        ),
    ];
}
