import fc from 'fast-check';

import type { RobotsFetchResult } from 'crawlee-throttling/types';
import {
    RobotsCrawlDelayCache,
    robotsVerdictFromResponse,
} from '../../../packages/throttling/src/robots/robots-crawl-delay';
import { DEFAULTS } from '../../../packages/throttling/src/options/defaults';
import { fcParams } from './fc-params';

const ROBOTS_URL = 'https://example.com/robots.txt';

const delayText = fc.oneof(
    fc.double().map(String),
    fc.nat({ max: 100_000 }).map(String),
    fc.constantFrom(
        '0',
        '-1',
        '0.5',
        '1e999',
        '-1e999',
        'Infinity',
        'NaN',
        '',
        ' 2 ',
        '0x10',
        '1,5',
        '5e-324',
        '1e308',
    ),
);
const agentText = fc.constantFrom('*', 'MyBot', 'mybot/1.0', 'OtherBot', '__proto__', 'constructor', '');
const line = fc.oneof(
    agentText.map((ua) => `User-agent: ${ua}`),
    delayText.map((d) => `Crawl-delay: ${d}`),
    delayText.map((d) => `crawl-DELAY:${d} # comment`),
    fc.constantFrom('Disallow: /', 'Allow: /a', '# comment', '', 'Sitemap: https://example.com/s.xml', '\ufeff'),
    fc.string({ unit: 'binary', maxLength: 40 }),
);
const robotsBody = fc
    .tuple(fc.array(line, { maxLength: 12 }), fc.constantFrom('\n', '\r\n', '\r'))
    .map(([lines, eol]) => lines.join(eol));

const status = fc.oneof(
    fc.integer({ min: 200, max: 299 }),
    fc.integer({ min: 0, max: 999 }),
    // Custom fetchers are user code: a status may be anything a number can be.
    fc.double({ min: 100, max: 600 }),
    fc.constantFrom(429, 404, 503, 301, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);
const headers = fc.dictionary(
    fc.constantFrom('retry-after', 'Retry-After', 'content-type', 'x'),
    fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 2 }), fc.constant(undefined)),
);
const maxCrawlDelaySecs = fc.oneof(
    fc.double({ min: Number.MIN_VALUE, max: 1e9, noNaN: true }),
    fc.constant(DEFAULTS.maxCrawlDelaySecs),
);
const userAgent = fc.option(fc.oneof(agentText, fc.string()), { nil: undefined });

describe('robots.txt Crawl-delay: properties', () => {
    test('never throws; a crawl delay is finite, positive and never above the cap', () => {
        fc.assert(
            fc.property(robotsBody, status, headers, userAgent, maxCrawlDelaySecs, (body, code, hs, ua, max) => {
                const verdict = robotsVerdictFromResponse({ status: code, body, headers: hs }, ROBOTS_URL, {
                    userAgent: ua,
                    maxCrawlDelaySecs: max,
                });
                if (verdict.kind !== 'crawlDelay') return;
                expect(Number.isFinite(verdict.delayMs) && verdict.delayMs > 0).toBe(true);
                expect(verdict.delayMs).toBeLessThanOrEqual(Number((max * 1000).toPrecision(12)));
                expect(verdict.capped).toBe(verdict.declaredSecs > max);
            }),
            fcParams(500),
        );
    });

    test('a crawl delay is read only from a 2xx answer', () => {
        fc.assert(
            fc.property(robotsBody, status, (rest, code) => {
                const body = `User-agent: *\nCrawl-delay: 5\n${rest}`;
                const verdict = robotsVerdictFromResponse({ status: code, body, headers: {} }, ROBOTS_URL);
                if (verdict.kind === 'crawlDelay')
                    expect(Number.isInteger(code) && code >= 200 && code <= 299).toBe(true);
            }),
            fcParams(300),
        );
    });

    test('one `*` group: a positive number is the delay (capped), anything else no delay', () => {
        fc.assert(
            fc.property(delayText, maxCrawlDelaySecs, (text, max) => {
                const body = `User-agent: *\nCrawl-delay: ${text}\nDisallow: /private\n`;
                const verdict = robotsVerdictFromResponse({ status: 200, body, headers: {} }, ROBOTS_URL, {
                    maxCrawlDelaySecs: max,
                });
                const declared = Number(text.trim());
                if (!(declared > 0)) {
                    expect(verdict).toEqual({ kind: 'none', reason: 'no-crawl-delay' });
                    return;
                }
                const expectedSecs = Math.min(declared, max);
                expect(verdict.kind).toBe('crawlDelay');
                if (verdict.kind !== 'crawlDelay') return;
                expect(verdict.declaredSecs).toBe(declared);
                // secsToMs rounds to 12 significant digits (1.1 s is 1100 ms, not 1100.0000000000002).
                expect(Math.abs(verdict.delayMs - expectedSecs * 1000)).toBeLessThanOrEqual(expectedSecs * 1e-8);
            }),
            fcParams(300),
        );
    });

    test('the cache never rejects for an http(s) URL, whatever the fetcher returns or throws', async () => {
        const outcome = fc.oneof(
            fc.record({ status, body: robotsBody, headers }).map((r) => async () => r as RobotsFetchResult),
            fc.constant(async (): Promise<RobotsFetchResult> => {
                throw new Error('ECONNRESET');
            }),
        );
        await fc.assert(
            fc.asyncProperty(outcome, userAgent, async (fetch, ua) => {
                const cache = new RobotsCrawlDelayCache({ fetcher: fetch, now: () => 0 });
                const verdict = await cache.get('https://example.com/page', { userAgent: ua });
                if (verdict.kind === 'crawlDelay') {
                    expect(verdict.delayMs).toBeLessThanOrEqual(DEFAULTS.maxCrawlDelaySecs * 1000);
                }
            }),
            fcParams(200),
        );
    });
});

describe('robots.txt Crawl-delay: regression, a status that is not an HTTP status', () => {
    // Found by the 2xx property: NaN and fractions passed every range check and the body was read.
    test.each([Number.NaN, 200.5, 299.5, 200.00000000000003])('status %p gives no crawl delay', (code) => {
        const body = 'User-agent: *\nCrawl-delay: 5\n';
        expect(robotsVerdictFromResponse({ status: code, body, headers: {} }, ROBOTS_URL)).toEqual({
            kind: 'none',
            reason: 'unreachable',
        });
    });
});
