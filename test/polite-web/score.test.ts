import {
    defaultSites,
    formatScoreTable,
    type LogEntry,
    scoreLog,
    startPoliteWeb,
    TokenBucket,
} from '@crawlee-throttling/polite-web';
import { parseCliArgs } from '../../packages/polite-web/src/cli-args';
import { get, manualClock } from './http-helpers';

const entry = (site: string, path: string, time: number, status = 200, inFlightAtArrival = 1): LogEntry => ({
    site,
    path,
    time,
    status,
    inFlightAtArrival,
});

describe('scoreLog (pure)', () => {
    const sites = [
        { host: 'a.example', rate: 2, crawlDelay: 0.5, pages: 9 },
        { host: 'b.example', rate: 4, pages: 19 },
        { host: 'idle.example' },
    ];
    const log: LogEntry[] = [
        entry('a.example', '/robots.txt', 0), // ignored: robots.txt
        entry('a.example', '/', 1_000),
        entry('a.example', '/page/0', 1_500), // gap 500: fine
        entry('a.example', '/page/1', 1_797, 429, 2), // gap 297: violation, refusal
        entry('a.example', '/page/1', 2_296), // gap 499: within 5 ms tolerance
        entry('a.example', '/page/0', 2_900, 200, 3), // duplicate page
        entry('b.example', '/', 1_200),
        entry('b.example', '/page/0', 1_210, 503),
        entry('b.example', '/page/9', 1_400, 404),
        entry('B.Example', '/page/1', 1_600),
        entry('unknown.example', '/', 5_000, 502), // not a scored site
    ];

    it('scores each site', () => {
        const score = scoreLog(log, sites);
        const [a, b, idle] = score.sites;
        expect(a).toEqual({
            host: 'a.example',
            requests: 5,
            served: 4,
            distinctPagesServed: 3,
            refusals: 1,
            refusedShare: 0.2,
            resets: 0,
            minGapMs: 297,
            crawlDelayViolations: 1,
            maxInFlight: 3,
            firstAt: 1_000,
            lastAt: 2_900,
            idealMs: 10 * 500,
        });
        expect(b).toMatchObject({
            host: 'b.example',
            requests: 4,
            served: 2,
            distinctPagesServed: 2,
            refusals: 1,
            refusedShare: 0.25,
            minGapMs: 10,
            crawlDelayViolations: 0,
            firstAt: 1_200,
            lastAt: 1_600,
            idealMs: 20 * 250,
        });
        expect(idle).toMatchObject({
            requests: 0,
            refusedShare: 0,
            minGapMs: null,
            firstAt: null,
            lastAt: null,
            idealMs: 0,
        });
    });

    it('sums totals and spans the makespan over all sites', () => {
        const score = scoreLog(log, sites);
        expect(score.totals).toEqual({
            requests: 9,
            served: 6,
            distinctPagesServed: 5,
            refusals: 2,
            refusedShare: 2 / 9,
            resets: 0,
            crawlDelayViolations: 1,
            maxInFlight: 3,
            firstAt: 1_000,
            lastAt: 2_900,
        });
        expect(score.makespanMs).toBe(1_900);
        expect(score.idealMs).toBe(5_000);
    });

    it('honours the tolerance and page-count options', () => {
        expect(scoreLog(log, sites, { toleranceMs: 0 }).sites[0].crawlDelayViolations).toBe(2);
        expect(scoreLog(log, sites, { toleranceMs: 250 }).sites[0].crawlDelayViolations).toBe(0);
        expect(scoreLog(log, sites, { pages: 100 }).idealMs).toBe(100 * 500);
        expect(scoreLog(log, sites, { pages: { 'b.example': 100 } }).sites.map((s) => s.idealMs)).toEqual([
            5_000, 25_000, 0,
        ]);
    });

    it('sorts unordered logs by arrival and handles an empty log', () => {
        const shuffled = [...log].reverse();
        expect(scoreLog(shuffled, sites)).toEqual(scoreLog(log, sites));
        const empty = scoreLog([], sites);
        expect(empty.makespanMs).toBe(0);
        expect(empty.totals).toMatchObject({ requests: 0, refusedShare: 0, firstAt: null, lastAt: null });
    });

    it('formats a table', () => {
        const table = formatScoreTable(scoreLog(log, sites));
        expect(table.split('\n')[0]).toMatch(/^site\s+requests\s+served/);
        expect(table).toMatch(/a\.example\s+5\s+4\s+3\s+1\s+20\s+297\s+1\s+3\s+5000/);
        expect(table).toMatch(/^total\s+9/m);
        expect(table).toContain('makespan 1900 ms, ideal 5000 ms');
    });
});

describe('web.score() and the live log', () => {
    it('scores what the server saw', async () => {
        const clock = manualClock(10_000);
        const web = await startPoliteWeb({
            sites: [{ host: 'a.example', rate: 1, burst: 1, crawlDelay: 1, pages: 3 }],
            clock: clock.now,
        });
        try {
            await get(web, 'a.example', '/robots.txt');
            await get(web, 'a.example', '/');
            clock.advance(200);
            await get(web, 'a.example', '/page/0');
            clock.advance(800);
            await get(web, 'a.example', '/page/0');
            expect(web.log.map((e) => [e.path, e.time, e.status])).toEqual([
                ['/robots.txt', 10_000, 200],
                ['/', 10_000, 200],
                ['/page/0', 10_200, 429],
                ['/page/0', 11_000, 200],
            ]);
            expect(web.score().sites[0]).toMatchObject({
                requests: 3,
                served: 2,
                distinctPagesServed: 2,
                refusals: 1,
                minGapMs: 200,
                crawlDelayViolations: 2,
                idealMs: 4_000,
            });
            expect(web.score().makespanMs).toBe(1_000);
            web.resetLog();
            expect(web.score().totals.requests).toBe(0);
        } finally {
            await web.close();
        }
    });
});

describe('defaultSites', () => {
    it('makes n cross-linked, rate-limited sites', () => {
        const sites = defaultSites(3);
        expect(sites.map((s) => s.host)).toEqual(['site-1.example', 'site-2.example', 'site-3.example']);
        expect(sites[0]).toMatchObject({
            rate: 4,
            burst: 2,
            pages: 20,
            refusal: { status: 429, retryAfter: 'seconds' },
        });
        expect(sites[1].crossLinks).toEqual(['site-1.example', 'site-3.example']);
    });

    it('applies overrides, also per site', () => {
        expect(defaultSites(2, { rate: undefined, pages: 3 })[1]).toMatchObject({
            host: 'site-2.example',
            rate: undefined,
            pages: 3,
        });
        const sites = defaultSites(2, (i) => ({ crawlDelay: i + 0.5 }));
        expect(sites.map((s) => s.crawlDelay)).toEqual([0.5, 1.5]);
    });
});

describe('TokenBucket', () => {
    it('starts full, refills linearly up to the burst and ignores a clock stepping back', () => {
        const bucket = new TokenBucket(3, 2, 0);
        expect([bucket.tryTake(0), bucket.tryTake(0), bucket.tryTake(0)]).toEqual([true, true, false]);
        expect(bucket.msUntilToken(0)).toBeCloseTo(333.33, 1);
        expect(bucket.msUntilFull(0)).toBeCloseTo(666.67, 1);
        // 3 × (1/3 s) of float refill must add up to a whole token.
        expect(bucket.tryTake(1000 / 3)).toBe(true);
        expect(bucket.tryTake(0)).toBe(false);
        expect(bucket.remaining(10_000)).toBe(2);
    });
});

describe('CLI arguments', () => {
    it('builds web options from flags', () => {
        const command = parseCliArgs(
            [
                '--sites',
                '2',
                '--rate',
                '5',
                '--burst',
                '3',
                '--pages',
                '60',
                '--port',
                '8080',
                '--crawl-delay',
                '0.2',
            ].concat(['--refusal', '503', '--retry-after', 'http-date', '--rate-limit-headers', 'ietf']),
        );
        if (command.help) throw new Error('unexpected help');
        expect(command.options.port).toBe(8080);
        expect(command.options.sites).toHaveLength(2);
        expect(command.options.sites[1]).toMatchObject({
            host: 'site-2.example',
            rate: 5,
            burst: 3,
            pages: 60,
            crawlDelay: 0.2,
            refusal: { status: 503, retryAfter: 'http-date', rateLimitHeaders: 'ietf' },
        });
    });

    it('treats --rate 0 as unlimited and rejects bad values', () => {
        const command = parseCliArgs(['--rate', '0']);
        expect(!command.help && command.options.sites[0].rate).toBeUndefined();
        expect(parseCliArgs(['--help'])).toEqual({ help: true });
        expect(() => parseCliArgs(['--refusal', '418'])).toThrow(/refusal/);
        expect(() => parseCliArgs(['--sites', 'many'])).toThrow(/sites/);
        expect(() => parseCliArgs(['--bogus'])).toThrow();
    });
});
