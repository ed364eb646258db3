import { parseArgs } from 'node:util';

import type { DemoOptions } from './demo';

export const USAGE = `Usage: npm run demo -- [options]

Crawls a local web of rate-limited sites with a CheerioCrawler and the throttler (live table once a
second), then the same crawl without the throttler, prints a summary and writes an HTML report.

  --sites N       number of sites (default 4)
  --pages N       pages per site (default 25)
  --rate R        requests/s of every site (default: each site's own)
  --out DIR       report directory (default demo-report, under the current directory)
  --no-baseline   skip the crawl without the throttler
  --quiet         no live table
  --processes N   crawl with N crawler processes (needs --redis); the report marks which process
                  crawled each page
  --redis         the processes share one frontier (RedisStorageClient: each starts from every page,
                  each page is crawled once) and one RedisDomainClock; the baseline runs them each
                  alone on its share of the pages
  --redis-url URL where Redis listens (implies --redis; default REDIS_URL, else redis://127.0.0.1:6379)
  --help          this text`;

function positiveNumber(name: string, text: string | undefined, integer: boolean): number | undefined {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!(Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value)))) {
        throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got "${text}"`);
    }
    return value;
}

/** Parses the demo's command line; `help: true` when usage was asked for. */
export function parseDemoArgs(argv: string[]): DemoOptions & { help: boolean } {
    const { values } = parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
            sites: { type: 'string' },
            pages: { type: 'string' },
            rate: { type: 'string' },
            out: { type: 'string' },
            'no-baseline': { type: 'boolean', default: false },
            quiet: { type: 'boolean', default: false },
            processes: { type: 'string' },
            redis: { type: 'boolean', default: false },
            'redis-url': { type: 'string' },
            help: { type: 'boolean', short: 'h', default: false },
        },
    });
    return {
        help: values.help ?? false,
        sites: positiveNumber('sites', values.sites, true),
        pages: positiveNumber('pages', values.pages, true),
        rate: positiveNumber('rate', values.rate, false),
        out: values.out,
        baseline: !values['no-baseline'],
        quiet: values.quiet ?? false,
        processes: positiveNumber('processes', values.processes, true),
        redis: (values.redis ?? false) || values['redis-url'] !== undefined,
        redisUrl: values['redis-url'],
    };
}
