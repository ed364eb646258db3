import type { SiteOptions } from './site-options';

/** Per-site overrides for {@link defaultSites}: the same for all, or computed from the 0-based index and host. */
export type SiteOverrides = Partial<SiteOptions> | ((index: number, host: string) => Partial<SiteOptions>);

/**
 * `n` sites `site-1.example` … `site-<n>.example`, each limited to 4 requests/s with a burst of 2,
 * refusing with 429 + `Retry-After` seconds, 20 pages, and linking to every other site so a crawler
 * that starts on one discovers all of them.
 */
export function defaultSites(n: number, overrides: SiteOverrides = {}): SiteOptions[] {
    if (!(Number.isInteger(n) && n >= 0)) throw new RangeError(`site count must be an integer >= 0, got ${n}`);
    const hosts = Array.from({ length: n }, (_, i) => `site-${i + 1}.example`);
    return hosts.map((host, i) => {
        const override = typeof overrides === 'function' ? overrides(i, host) : overrides;
        return {
            rate: 4,
            burst: 2,
            refusal: { status: 429, retryAfter: 'seconds' },
            pages: 20,
            crossLinks: hosts.filter((other) => other !== host),
            ...override,
            host: override.host ?? host,
        };
    });
}
