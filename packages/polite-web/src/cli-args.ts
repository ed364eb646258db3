import { parseArgs } from 'node:util';
import { defaultSites } from './default-sites';
import type { PoliteWebOptions } from './polite-web';
import type { RateLimitHeaderStyle, RetryAfterStyle, SiteOptions } from './site-options';

export const CLI_USAGE = `Usage: polite-web [options]

Starts a local web of rate-limited sites site-1.example … site-N.example on 127.0.0.1,
reachable through it as an HTTP proxy. Ctrl-C stops it and prints the score.

Options:
  --sites N                 number of sites (default 4)
  --rate R                  requests/s per site, 0 = unlimited (default 4)
  --burst B                 token bucket capacity (default 2)
  --pages P                 pages per site (default 20)
  --port PORT               port on 127.0.0.1 (default 0: random)
  --crawl-delay S           Crawl-delay in robots.txt, seconds (default none)
  --latency MS              response delay in ms (default 0)
  --max-concurrent C        refuse beyond C requests in flight per site (default none)
  --refusal 429|503         refusal status (default 429)
  --retry-after seconds|http-date|none (default seconds)
  --rate-limit-headers none|ietf|legacy|x-ratelimit|draft-8|github (default none)
  -h, --help                show this help`;

/** What the CLI was asked to do. */
export type CliCommand = { help: true } | { help: false; options: PoliteWebOptions };

function numberFlag(name: string, raw: string | undefined, check: (n: number) => boolean): number | undefined {
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || !check(value)) throw new Error(`invalid --${name}: ${raw}`);
    return value;
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[]): T | undefined {
    if (raw === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(raw))
        throw new Error(`invalid --${name}: ${raw} (expected ${allowed.join('|')})`);
    return raw as T;
}

/** Parses CLI flags into web options; throws on invalid values. */
export function parseCliArgs(argv: string[]): CliCommand {
    const { values } = parseArgs({
        args: argv,
        strict: true,
        options: {
            sites: { type: 'string' },
            rate: { type: 'string' },
            burst: { type: 'string' },
            pages: { type: 'string' },
            port: { type: 'string' },
            'crawl-delay': { type: 'string' },
            latency: { type: 'string' },
            'max-concurrent': { type: 'string' },
            refusal: { type: 'string' },
            'retry-after': { type: 'string' },
            'rate-limit-headers': { type: 'string' },
            help: { type: 'boolean', short: 'h' },
        },
    });
    if (values.help) return { help: true };

    const isCount = (n: number): boolean => Number.isInteger(n) && n >= 0;
    const count = numberFlag('sites', values.sites, isCount) ?? 4;
    const rate = numberFlag('rate', values.rate, (n) => n >= 0);
    const status = oneOf('refusal', values.refusal, ['429', '503'] as const);
    const overrides: Partial<SiteOptions> = {
        // 0 reads naturally as "no limit" on a command line.
        rate: rate === 0 ? undefined : (rate ?? 4),
        burst: numberFlag('burst', values.burst, (n) => Number.isInteger(n) && n >= 1) ?? 2,
        pages: numberFlag('pages', values.pages, isCount) ?? 20,
        crawlDelay: numberFlag('crawl-delay', values['crawl-delay'], (n) => n >= 0),
        latencyMs: numberFlag('latency', values.latency, (n) => n >= 0) ?? 0,
        maxConcurrent: numberFlag('max-concurrent', values['max-concurrent'], (n) => Number.isInteger(n) && n >= 1),
        refusal: {
            status: status === '503' ? 503 : 429,
            retryAfter:
                oneOf<RetryAfterStyle>('retry-after', values['retry-after'], ['seconds', 'http-date', 'none']) ??
                'seconds',
            rateLimitHeaders:
                oneOf<RateLimitHeaderStyle>('rate-limit-headers', values['rate-limit-headers'], [
                    'none',
                    'ietf',
                    'legacy',
                    'x-ratelimit',
                    'draft-8',
                    'github',
                ]) ?? 'none',
        },
    };
    return {
        help: false,
        options: {
            sites: defaultSites(count, overrides),
            port: numberFlag('port', values.port, (n) => Number.isInteger(n) && n >= 0 && n <= 65535) ?? 0,
        },
    };
}
