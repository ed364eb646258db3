import type { RobotsFetchResult, RobotsFetcher } from '../../packages/throttling/src/options/robots-fetcher';
import type { RobotsVerdict } from '../../packages/throttling/src/robots/robots-crawl-delay';
import {
    RobotsCrawlDelayCache,
    robotsVerdictFromResponse,
} from '../../packages/throttling/src/robots/robots-crawl-delay';

interface Deferred<T> {
    promise: Promise<T>;
    resolve: (value: T) => void;
    reject: (error: unknown) => void;
}

function deferred<T>(): Deferred<T> {
    let resolve!: (value: T) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
    });
    return { promise, resolve, reject };
}

type FetchCall = { robotsUrl: string; options: Parameters<RobotsFetcher>[1] };

/** Fake fetcher: records calls and answers from `respond`, which may return a result, a promise, or throw. */
function fakeFetcher(respond: (robotsUrl: string) => RobotsFetchResult | Promise<RobotsFetchResult>) {
    const calls: FetchCall[] = [];
    const fetcher: RobotsFetcher = async (robotsUrl, options) => {
        calls.push({ robotsUrl, options });
        return respond(robotsUrl);
    };
    return { fetcher, calls };
}

function ok(body: string): RobotsFetchResult {
    return { status: 200, body, headers: { 'content-type': 'text/plain' } };
}

function status(code: number, headers: RobotsFetchResult['headers'] = {}): RobotsFetchResult {
    return { status: code, body: '', headers };
}

/** Manually advanced clock in epoch ms. */
function manualClock(start = 1_700_000_000_000) {
    let t = start;
    return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const PAGE = 'https://example.com/some/page?q=1';

describe('RobotsCrawlDelayCache verdicts', () => {
    async function verdictFor(result: RobotsFetchResult, userAgent?: string, maxCrawlDelaySecs?: number) {
        const { fetcher } = fakeFetcher(() => result);
        return new RobotsCrawlDelayCache({ fetcher, maxCrawlDelaySecs }).get(PAGE, { userAgent });
    }

    it('keeps a fractional crawl delay exactly (0.5 s → 500 ms)', async () => {
        await expect(verdictFor(ok('User-agent: *\nCrawl-delay: 0.5\n'))).resolves.toEqual({
            kind: 'crawlDelay',
            delayMs: 500,
            capped: false,
            declaredSecs: 0.5,
        });
    });

    it('converts delays without float noise or rounding to zero', async () => {
        await expect(verdictFor(ok('User-agent: *\nCrawl-delay: 1.1\n'))).resolves.toMatchObject({ delayMs: 1100 });
        await expect(verdictFor(ok('User-agent: *\nCrawl-delay: 0.0004\n'))).resolves.toMatchObject({
            delayMs: 0.4,
        });
    });

    it('prefers the group of the given user agent and falls back to *', async () => {
        const body = ['User-agent: *', 'Crawl-delay: 10', '', 'User-agent: PoliteBot', 'Crawl-delay: 2', ''].join('\n');
        await expect(verdictFor(ok(body), 'PoliteBot/1.2 (+https://bot.example)')).resolves.toMatchObject({
            delayMs: 2000,
        });
        await expect(verdictFor(ok(body), 'OtherBot/3.0')).resolves.toMatchObject({ delayMs: 10_000 });
        await expect(verdictFor(ok(body))).resolves.toMatchObject({ delayMs: 10_000 });
    });

    it('caps a delay above 60 s by default and flags it', async () => {
        await expect(verdictFor(ok('User-agent: *\nCrawl-delay: 120\n'))).resolves.toEqual({
            kind: 'crawlDelay',
            delayMs: 60_000,
            capped: true,
            declaredSecs: 120,
        });
        await expect(verdictFor(ok('User-agent: *\nCrawl-delay: 60\n'))).resolves.toEqual({
            kind: 'crawlDelay',
            delayMs: 60_000,
            capped: false,
            declaredSecs: 60,
        });
    });

    it('honours a custom cap', async () => {
        await expect(verdictFor(ok('User-agent: *\nCrawl-delay: 10\n'), undefined, 5)).resolves.toEqual({
            kind: 'crawlDelay',
            delayMs: 5000,
            capped: true,
            declaredSecs: 10,
        });
        await expect(verdictFor(ok('User-agent: *\nCrawl-delay: 4.5\n'), undefined, 5)).resolves.toMatchObject({
            delayMs: 4500,
            capped: false,
        });
    });

    it.each([
        ['zero', 'User-agent: *\nCrawl-delay: 0\n'],
        ['negative', 'User-agent: *\nCrawl-delay: -3\n'],
        ['not a number', 'User-agent: *\nCrawl-delay: soon\n'],
        ['absent', 'User-agent: *\nDisallow: /private\n'],
        ['empty file', ''],
    ])('treats a %s crawl delay as none', async (_label, body) => {
        await expect(verdictFor(ok(body))).resolves.toEqual({ kind: 'none', reason: 'no-crawl-delay' });
    });

    it.each<[number, RobotsVerdict]>([
        [404, { kind: 'none', reason: 'missing' }],
        [410, { kind: 'none', reason: 'missing' }],
        [403, { kind: 'none', reason: 'client-error' }],
        [401, { kind: 'none', reason: 'client-error' }],
        [500, { kind: 'none', reason: 'server-error', status: 500 }],
        [503, { kind: 'none', reason: 'server-error', status: 503 }],
    ])('maps HTTP %i without a body parse', async (code, expected) => {
        // The body would yield a delay if it were (wrongly) parsed.
        const result = { status: code, body: 'User-agent: *\nCrawl-delay: 7\n', headers: {} };
        await expect(verdictFor(result)).resolves.toEqual(expected);
    });

    it('maps 429 to rateLimited with the raw Retry-After header', async () => {
        await expect(verdictFor(status(429, { 'retry-after': '120' }))).resolves.toEqual({
            kind: 'rateLimited',
            retryAfterHeader: '120',
        });
        await expect(verdictFor(status(429, { 'Retry-After': ['5', '9'] }))).resolves.toEqual({
            kind: 'rateLimited',
            retryAfterHeader: ['5', '9'],
        });
        await expect(verdictFor(status(429))).resolves.toEqual({ kind: 'rateLimited' });
    });

    it('maps a rejecting fetcher to unreachable', async () => {
        const { fetcher } = fakeFetcher(() => {
            throw new Error('ECONNREFUSED');
        });
        await expect(new RobotsCrawlDelayCache({ fetcher }).get(PAGE)).resolves.toEqual({
            kind: 'none',
            reason: 'unreachable',
        });
    });

    it('treats an unresolved redirect as missing', () => {
        expect(robotsVerdictFromResponse(status(301, { location: '/x' }), 'https://example.com/robots.txt')).toEqual({
            kind: 'none',
            reason: 'missing',
        });
    });
});

describe('RobotsCrawlDelayCache caching', () => {
    const DELAY_1 = ok('User-agent: *\nCrawl-delay: 1\n');

    it('fetches <origin>/robots.txt once per origin and passes options through', async () => {
        const { fetcher, calls } = fakeFetcher(() => DELAY_1);
        const cache = new RobotsCrawlDelayCache({ fetcher, timeoutMs: 1234 });
        const options = { userAgent: 'PoliteBot', proxyUrl: 'http://proxy.local:8000' };

        await cache.get('https://example.com/a', options);
        await cache.get('https://example.com/b/c?d=e#f', options);

        expect(calls).toEqual([
            {
                robotsUrl: 'https://example.com/robots.txt',
                options: { userAgent: 'PoliteBot', proxyUrl: 'http://proxy.local:8000', timeoutMs: 1234 },
            },
        ]);
    });

    it('uses a 10 s fetch timeout by default', async () => {
        const { fetcher, calls } = fakeFetcher(() => DELAY_1);
        await new RobotsCrawlDelayCache({ fetcher }).get(PAGE);
        expect(calls[0].options.timeoutMs).toBe(10_000);
    });

    it('treats another port or scheme as another origin', async () => {
        const { fetcher, calls } = fakeFetcher(() => DELAY_1);
        const cache = new RobotsCrawlDelayCache({ fetcher });

        await cache.get('https://example.com/a');
        await cache.get('https://example.com:8443/a');
        await cache.get('http://example.com/a');
        await cache.get('https://example.com:443/b'); // default port: same origin as the first

        expect(calls.map((c) => c.robotsUrl)).toEqual([
            'https://example.com/robots.txt',
            'https://example.com:8443/robots.txt',
            'http://example.com/robots.txt',
        ]);
        expect(cache.size).toBe(3);
    });

    it('keys the cache by user agent as well', async () => {
        const body = 'User-agent: *\nCrawl-delay: 10\n\nUser-agent: PoliteBot\nCrawl-delay: 2\n';
        const { fetcher, calls } = fakeFetcher(() => ok(body));
        const cache = new RobotsCrawlDelayCache({ fetcher });

        await expect(cache.get(PAGE, { userAgent: 'PoliteBot' })).resolves.toMatchObject({ delayMs: 2000 });
        await expect(cache.get(PAGE, { userAgent: 'OtherBot' })).resolves.toMatchObject({ delayMs: 10_000 });
        await expect(cache.get(PAGE, { userAgent: 'PoliteBot' })).resolves.toMatchObject({ delayMs: 2000 });

        expect(calls.map((c) => c.options.userAgent)).toEqual(['PoliteBot', 'OtherBot']);
    });

    it('coalesces concurrent lookups for the same key into one fetch', async () => {
        const pending = deferred<RobotsFetchResult>();
        const { fetcher, calls } = fakeFetcher(() => pending.promise);
        const cache = new RobotsCrawlDelayCache({ fetcher });

        const lookups = [cache.get('https://example.com/1'), cache.get('https://example.com/2'), cache.get(PAGE)];
        await Promise.resolve();
        expect(calls).toHaveLength(1);
        expect(cache.peek(PAGE)).toBeUndefined();
        expect(cache.size).toBe(1);

        pending.resolve(ok('User-agent: *\nCrawl-delay: 3\n'));
        const verdicts = await Promise.all(lookups);

        expect(calls).toHaveLength(1);
        for (const verdict of verdicts) expect(verdict).toEqual(verdicts[0]);
        expect(verdicts[0]).toMatchObject({ kind: 'crawlDelay', delayMs: 3000 });
    });

    it('refetches once the TTL has expired', async () => {
        const clock = manualClock();
        let delaySecs = 1;
        const { fetcher, calls } = fakeFetcher(() => ok(`User-agent: *\nCrawl-delay: ${delaySecs}\n`));
        const cache = new RobotsCrawlDelayCache({ fetcher, now: clock.now, ttlMs: 1000 });

        await expect(cache.get(PAGE)).resolves.toMatchObject({ delayMs: 1000 });
        delaySecs = 2;
        clock.advance(999);
        await expect(cache.get(PAGE)).resolves.toMatchObject({ delayMs: 1000 });
        expect(cache.peek(PAGE)).toMatchObject({ delayMs: 1000 });
        expect(calls).toHaveLength(1);

        clock.advance(1);
        expect(cache.peek(PAGE)).toBeUndefined();
        expect(cache.size).toBe(0);
        await expect(cache.get(PAGE)).resolves.toMatchObject({ delayMs: 2000 });
        expect(calls).toHaveLength(2);
    });

    it('defaults the TTL to 24 hours', async () => {
        const clock = manualClock();
        const { fetcher, calls } = fakeFetcher(() => DELAY_1);
        const cache = new RobotsCrawlDelayCache({ fetcher, now: clock.now });

        await cache.get(PAGE);
        clock.advance(24 * 60 * 60 * 1000 - 1);
        await cache.get(PAGE);
        expect(calls).toHaveLength(1);
        clock.advance(1);
        await cache.get(PAGE);
        expect(calls).toHaveLength(2);
    });

    it('does not cache a rateLimited verdict, but still coalesces concurrent lookups', async () => {
        const clock = manualClock();
        let next: () => Promise<RobotsFetchResult> = async () => status(429, { 'retry-after': '30' });
        const { fetcher, calls } = fakeFetcher(() => next());
        const cache = new RobotsCrawlDelayCache({ fetcher, now: clock.now });

        await expect(cache.get(PAGE)).resolves.toMatchObject({ kind: 'rateLimited', retryAfterHeader: '30' });
        expect(cache.peek(PAGE)).toBeUndefined();

        const pending = deferred<RobotsFetchResult>();
        next = () => pending.promise;
        const first = cache.get(PAGE);
        const second = cache.get(PAGE);
        await Promise.resolve();
        expect(calls).toHaveLength(2);

        pending.resolve(DELAY_1);
        await expect(Promise.all([first, second])).resolves.toEqual([
            expect.objectContaining({ delayMs: 1000 }),
            expect.objectContaining({ delayMs: 1000 }),
        ]);
        await cache.get(PAGE);
        expect(calls).toHaveLength(2);
    });

    it('does not cache unreachable and server-error verdicts: the caller reads again after a pause', async () => {
        let next: () => RobotsFetchResult = () => {
            throw new Error('timeout');
        };
        const { fetcher, calls } = fakeFetcher(() => next());
        const cache = new RobotsCrawlDelayCache({ fetcher });
        await expect(cache.get(PAGE)).resolves.toEqual({ kind: 'none', reason: 'unreachable' });
        expect(cache.peek(PAGE)).toBeUndefined();
        next = () => status(503, { 'retry-after': '9' });
        await expect(cache.get(PAGE)).resolves.toEqual({
            kind: 'none',
            reason: 'server-error',
            status: 503,
            retryAfterHeader: '9',
        });
        expect(cache.peek(PAGE)).toBeUndefined();
        expect(calls).toHaveLength(2);
        // A 4xx is an answer (no rules), cached like a file.
        next = () => status(403);
        await cache.get(PAGE);
        await cache.get(PAGE);
        expect(calls).toHaveLength(3);
        expect(cache.peek(PAGE)).toEqual({ kind: 'none', reason: 'client-error' });
    });

    it('peek is synchronous, per user agent, and empty before the first lookup', async () => {
        const { fetcher } = fakeFetcher(() => DELAY_1);
        const cache = new RobotsCrawlDelayCache({ fetcher });

        expect(cache.peek(PAGE)).toBeUndefined();
        await cache.get(PAGE, { userAgent: 'PoliteBot' });
        expect(cache.peek('https://example.com/other', 'PoliteBot')).toMatchObject({ delayMs: 1000 });
        expect(cache.peek(PAGE)).toBeUndefined();
    });

    it('clear() forgets entries and an in-flight fetch does not repopulate the cache', async () => {
        const pending = deferred<RobotsFetchResult>();
        let useDeferred = false;
        const { fetcher, calls } = fakeFetcher(() => (useDeferred ? pending.promise : DELAY_1));
        const cache = new RobotsCrawlDelayCache({ fetcher });

        await cache.get('https://a.example/');
        await cache.get('https://b.example/');
        expect(cache.size).toBe(2);
        cache.clear();
        expect(cache.size).toBe(0);
        expect(cache.peek('https://a.example/')).toBeUndefined();

        useDeferred = true;
        const inFlight = cache.get(PAGE);
        cache.clear();
        pending.resolve(DELAY_1);
        await expect(inFlight).resolves.toMatchObject({ delayMs: 1000 });
        expect(cache.peek(PAGE)).toBeUndefined();
        expect(cache.size).toBe(0);

        useDeferred = false;
        await cache.get('https://a.example/');
        expect(calls).toHaveLength(4);
    });

    it('rejects non-http(s) or relative URLs without fetching', async () => {
        const { fetcher, calls } = fakeFetcher(() => DELAY_1);
        const cache = new RobotsCrawlDelayCache({ fetcher });
        // Matched by message: the URL constructor's TypeError comes from another realm under jest.
        await expect(cache.get('/relative/path')).rejects.toThrow(/Invalid absolute URL.*\/relative\/path/);
        await expect(cache.get('file:///etc/robots.txt')).rejects.toThrow(/http\(s\) URLs only/);
        expect(() => cache.peek('not a url')).toThrow(/Invalid absolute URL/);
        expect(calls).toHaveLength(0);
    });

    it('rejects a non-positive cap at construction', () => {
        expect(() => new RobotsCrawlDelayCache({ maxCrawlDelaySecs: 0 })).toThrow(RangeError);
        expect(() => new RobotsCrawlDelayCache({ maxCrawlDelaySecs: Number.NaN })).toThrow(RangeError);
    });
});
