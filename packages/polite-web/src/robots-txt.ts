import { STATUS_CODES } from 'node:http';
import type { PageResponse } from './site-pages';
import type { ResolvedSite } from './site-options';

/** The site's /robots.txt: everything allowed, plus `Crawl-delay` when configured, unless overridden. */
export function robotsTxt(site: ResolvedSite): PageResponse {
    const contentType = 'text/plain; charset=utf-8';
    const lines = ['User-agent: *', 'Allow: /'];
    // Number#toString keeps fractions exact ("0.25") and never uses exponents for sane delays.
    if (site.crawlDelay !== undefined) lines.push(`Crawl-delay: ${site.crawlDelay}`);
    const generated = `${lines.join('\n')}\n`;
    if (!site.robots) return { status: 200, contentType, body: generated };

    const status = site.robots.status ?? 200;
    const ok = status >= 200 && status < 300;
    const body = site.robots.body ?? (ok ? generated : `${STATUS_CODES[status] ?? 'error'}\n`);
    return { status, contentType, body };
}
