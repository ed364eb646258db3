import type { SiteOptions } from '@crawlee-throttling/polite-web';

/** One demo site: its polite-web options and a one-line description of its limits. */
export interface DemoSite {
    options: SiteOptions;
    /** One line: pacing and refusal style. */
    describe: string;
    /** The same in two parts, for narrow labels. */
    pacing: string;
    refusal: string;
}

interface Profile {
    rate: number;
    burst: number;
    crawlDelay?: number;
    refusal: NonNullable<SiteOptions['refusal']>;
}

/** The four behaviours the demo cycles through. */
const PROFILES: Profile[] = [
    { rate: 5, burst: 2, refusal: { status: 429, retryAfter: 'seconds' } },
    { rate: 2, burst: 1, crawlDelay: 0.5, refusal: { status: 429, retryAfter: 'seconds' } },
    { rate: 10, burst: 5, refusal: { status: 503, retryAfter: 'http-date' } },
    { rate: 3, burst: 1, refusal: { status: 429, retryAfter: 'none' } },
];

function describeProfile(p: Profile): { pacing: string; refusal: string } {
    const parts = [`${p.rate} req/s`, `burst ${p.burst}`];
    if (p.crawlDelay !== undefined) parts.push(`Crawl-delay ${p.crawlDelay} s`);
    const retryAfter = {
        seconds: '+ Retry-After seconds',
        'http-date': '+ Retry-After HTTP-date',
        none: 'without Retry-After',
    }[p.refusal.retryAfter ?? 'seconds'];
    return { pacing: parts.join(', '), refusal: `refuses ${p.refusal.status} ${retryAfter}` };
}

/**
 * `count` sites `site-1.example` … cycling through the demo profiles, each with `pages` pages and
 * linking to every other site (so the crawl discovers domains by itself). `rate` overrides every rate.
 */
export function demoSites(count: number, pages: number, rate?: number): DemoSite[] {
    const hosts = Array.from({ length: count }, (_, i) => `site-${i + 1}.example`);
    return hosts.map((host, i) => {
        const base = PROFILES[i % PROFILES.length];
        const profile: Profile = rate === undefined ? base : { ...base, rate };
        const { pacing, refusal } = describeProfile(profile);
        return {
            describe: `${pacing}; ${refusal}`,
            pacing,
            refusal,
            options: {
                host,
                rate: profile.rate,
                burst: profile.burst,
                crawlDelay: profile.crawlDelay,
                refusal: profile.refusal,
                pages,
                crossLinks: hosts.filter((h) => h !== host),
            },
        };
    });
}
