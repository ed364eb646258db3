import type { ResolvedSite } from './site-options';

/** A response body the site can serve, before rate limiting and latency are applied. */
export interface PageResponse {
    status: number;
    contentType: string;
    body: string;
}

const PAGE_PATH = /^\/page\/(0|[1-9]\d*)$/;

/** Page numbers `/page/N` links to: a chain (N+1) keeps every page reachable, 2N+1 gives the crawl breadth. */
export function pageLinks(n: number, pages: number): number[] {
    return [...new Set([n + 1, 2 * n + 1])].filter((m) => m < pages);
}

function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function html(site: ResolvedSite, title: string, hrefs: string[]): string {
    const crossLinks = site.crossLinks.filter((host) => host !== site.host).map((host) => `http://${host}/`);
    const items = [...hrefs, ...crossLinks].map(
        (href) => `<li><a href="${escapeHtml(href)}">${escapeHtml(href)}</a></li>`,
    );
    return [
        '<!doctype html>',
        `<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>`,
        `<body><h1>${escapeHtml(title)}</h1><ul>${items.join('')}</ul></body></html>`,
        '',
    ].join('\n');
}

/** Routes a page path (query ignored) of a site: `/`, `/page/N`, or 404. */
export function sitePage(site: ResolvedSite, pathname: string): PageResponse {
    if (pathname === '/') {
        return {
            status: 200,
            contentType: 'text/html; charset=utf-8',
            body: html(site, `${site.host}`, site.pages > 0 ? ['/page/0'] : []),
        };
    }
    const match = PAGE_PATH.exec(pathname);
    const n = match ? Number(match[1]) : NaN;
    if (!(n < site.pages)) {
        return { status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found\n' };
    }
    const links = pageLinks(n, site.pages).map((m) => `/page/${m}`);
    return { status: 200, contentType: 'text/html; charset=utf-8', body: html(site, `${site.host} page ${n}`, links) };
}
