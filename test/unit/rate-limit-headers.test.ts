import { parseRateLimitHeaders, type ResponseHeaders } from '../../packages/throttling/src/response/rate-limit-headers';

// Sun, 15 Jun 2025 12:00:00 GMT
const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const NOW_EPOCH_SECONDS = NOW / 1000;

describe('parseRateLimitHeaders: nothing usable', () => {
    it('returns undefined for no headers', () => {
        expect(parseRateLimitHeaders({}, NOW)).toBeUndefined();
    });

    it('returns undefined for unrelated and undefined headers', () => {
        expect(
            parseRateLimitHeaders({ 'content-type': 'text/html', 'x-ratelimit-limit': undefined }, NOW),
        ).toBeUndefined();
    });

    it('returns undefined when every rate-limit header is malformed', () => {
        const headers = {
            'retry-after': 'soon',
            ratelimit: 'limit=100, remaining=0',
            'ratelimit-policy': '"p";q=abc',
            'ratelimit-remaining': '-1',
            'x-ratelimit-limit': 'lots',
            'x-ratelimit-reset': '',
        };
        expect(parseRateLimitHeaders(headers, NOW)).toBeUndefined();
    });

    it('returns undefined for a Retry-After in the past', () => {
        expect(parseRateLimitHeaders({ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' }, NOW)).toBeUndefined();
    });

    it('never throws on values of the wrong runtime type', () => {
        const headers = {
            'retry-after': 5,
            ratelimit: ['"p";r=1', 7],
            'x-ratelimit-remaining': null,
        } as unknown as ResponseHeaders;
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'ratelimit', remaining: 1 });
    });
});

describe('parseRateLimitHeaders: Retry-After', () => {
    it('reads delay-seconds', () => {
        expect(parseRateLimitHeaders({ 'retry-after': '120' }, NOW)).toEqual({
            source: 'retry-after',
            waitMs: 120_000,
        });
    });

    it('reads an HTTP-date relative to now', () => {
        expect(parseRateLimitHeaders({ 'Retry-After': 'Sun, 15 Jun 2025 12:00:45 GMT' }, NOW)).toEqual({
            source: 'retry-after',
            waitMs: 45_000,
        });
    });

    it('matches the name case-insensitively', () => {
        expect(parseRateLimitHeaders({ 'RETRY-AFTER': '3' }, NOW)).toEqual({ source: 'retry-after', waitMs: 3_000 });
    });

    it('uses the first usable value of a repeated header', () => {
        expect(parseRateLimitHeaders({ 'retry-after': ['x', '8', '9'] }, NOW)).toEqual({
            source: 'retry-after',
            waitMs: 8_000,
        });
    });

    it('treats 0 as no usable header', () => {
        expect(parseRateLimitHeaders({ 'retry-after': '0' }, NOW)).toBeUndefined();
    });
});

describe('parseRateLimitHeaders: IETF RateLimit / RateLimit-Policy', () => {
    it('combines a single policy with its remaining quota', () => {
        const headers = { 'RateLimit-Policy': '"default";q=100;w=60', RateLimit: '"default";r=50;t=30' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            remaining: 50,
            limit: 100,
            resetMs: 30_000,
            windowMs: 60_000,
        });
    });

    it('waits until the reset when the quota is exhausted', () => {
        const headers = { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=0;t=42' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            waitMs: 42_000,
            remaining: 0,
            limit: 100,
            resetMs: 42_000,
            windowMs: 60_000,
        });
    });

    it('does not wait when the exhausted quota resets now', () => {
        expect(parseRateLimitHeaders({ ratelimit: '"p";r=0;t=0' }, NOW)).toEqual({
            source: 'ratelimit',
            remaining: 0,
            resetMs: 0,
        });
    });

    it('does not wait when the exhausted quota has no reset', () => {
        expect(parseRateLimitHeaders({ ratelimit: '"p";r=0' }, NOW)).toEqual({ source: 'ratelimit', remaining: 0 });
    });

    it('uses the policy with the fewest remaining requests', () => {
        const headers = {
            'ratelimit-policy': '"burst";q=10;w=1, "daily";q=1000;w=86400',
            ratelimit: '"burst";r=5;t=1, "daily";r=2;t=3600',
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            remaining: 2,
            limit: 1000,
            resetMs: 3_600_000,
            windowMs: 86_400_000,
        });
    });

    it('breaks a tie on remaining by the longest reset', () => {
        const headers = {
            'ratelimit-policy': '"burst";q=10;w=1, "daily";q=1000;w=86400, "hourly";q=100;w=3600',
            ratelimit: '"burst";r=0;t=1, "daily";r=0;t=7200, "hourly";r=0;t=600',
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            waitMs: 7_200_000,
            remaining: 0,
            limit: 1000,
            resetMs: 7_200_000,
            windowMs: 86_400_000,
        });
    });

    it('joins repeated field lines into one list', () => {
        const headers = {
            'ratelimit-policy': ['"a";q=10;w=1', '"b";q=50;w=60'],
            ratelimit: ['"a";r=9;t=1', '"b";r=3;t=20'],
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            remaining: 3,
            limit: 50,
            resetMs: 20_000,
            windowMs: 60_000,
        });
    });

    it('merges differently-cased spellings of the same field', () => {
        const headers = { ratelimit: '"a";r=9;t=1', RateLimit: '"b";r=4;t=2' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'ratelimit', remaining: 4, resetMs: 2_000 });
    });

    it('pairs policies named by tokens as well as strings', () => {
        const headers = {
            'ratelimit-policy': 'burst;q=10;w=1, "daily";q=1000;w=86400',
            ratelimit: '"burst";r=1;t=1, daily;r=500;t=60',
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            remaining: 1,
            limit: 10,
            resetMs: 1_000,
            windowMs: 1_000,
        });
    });

    it('reports no limit or window when no policy has the governing name', () => {
        const headers = { 'ratelimit-policy': '"other";q=100;w=60', ratelimit: '"default";r=7;t=5' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'ratelimit', remaining: 7, resetMs: 5_000 });
    });

    it('reports the smallest quota when only policies are sent', () => {
        const headers = { 'ratelimit-policy': '"daily";q=1000;w=86400, "burst";q=10;w=1' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'ratelimit', limit: 10, windowMs: 1_000 });
    });

    it('accepts a decimal reset', () => {
        expect(parseRateLimitHeaders({ ratelimit: '"p";r=0;t=1.5' }, NOW)).toEqual({
            source: 'ratelimit',
            waitMs: 1_500,
            remaining: 0,
            resetMs: 1_500,
        });
    });

    it.each([
        ['negative remaining', '"p";r=-1;t=5, "q";r=8;t=5', 8],
        ['decimal remaining', '"p";r=1.5;t=5, "q";r=8;t=5', 8],
        ['string remaining', '"p";r="0";t=5, "q";r=8;t=5', 8],
        ['missing remaining', '"p";t=5, "q";r=8;t=5', 8],
        ['an inner list', '("p" "q");r=0;t=5, "q";r=8;t=5', 8],
    ])('ignores a member with %s', (_label, value, remaining) => {
        expect(parseRateLimitHeaders({ ratelimit: value }, NOW)).toEqual({
            source: 'ratelimit',
            remaining,
            resetMs: 5_000,
        });
    });

    it('ignores a negative reset but keeps the remaining count', () => {
        expect(parseRateLimitHeaders({ ratelimit: '"p";r=0;t=-5' }, NOW)).toEqual({
            source: 'ratelimit',
            remaining: 0,
        });
    });

    it('ignores invalid policy parameters individually', () => {
        const headers = { 'ratelimit-policy': '"p";q=-100;w=60', ratelimit: '"p";r=3;t=5' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            remaining: 3,
            resetMs: 5_000,
            windowMs: 60_000,
        });
    });

    it('ignores an unparseable field and falls back to the next source', () => {
        const headers = {
            ratelimit: 'limit=100, remaining=0, reset=30',
            'ratelimit-policy': '"p";q=100;w=60,',
            'x-ratelimit-remaining': '12',
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'x-ratelimit', remaining: 12 });
    });
});

describe('parseRateLimitHeaders: legacy RateLimit-*', () => {
    it('reads limit, remaining and reset (delta seconds)', () => {
        const headers = { 'RateLimit-Limit': '100', 'RateLimit-Remaining': '40', 'RateLimit-Reset': '25' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit-legacy',
            remaining: 40,
            limit: 100,
            resetMs: 25_000,
        });
    });

    it('waits until the reset when the quota is exhausted', () => {
        const headers = { 'ratelimit-limit': '100', 'ratelimit-remaining': '0', 'ratelimit-reset': '30' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit-legacy',
            waitMs: 30_000,
            remaining: 0,
            limit: 100,
            resetMs: 30_000,
        });
    });

    it('reads a limit that carries quota policies', () => {
        expect(parseRateLimitHeaders({ 'ratelimit-limit': '10, 10;w=1, 50;w=60' }, NOW)).toEqual({
            source: 'ratelimit-legacy',
            limit: 10,
        });
    });

    it('always reads the reset as delta seconds', () => {
        expect(parseRateLimitHeaders({ 'ratelimit-reset': '1750000000' }, NOW)).toEqual({
            source: 'ratelimit-legacy',
            resetMs: 1_750_000_000_000,
        });
    });

    it('caps an absurd reset at Number.MAX_SAFE_INTEGER', () => {
        expect(parseRateLimitHeaders({ 'ratelimit-reset': '9'.repeat(30) }, NOW)).toEqual({
            source: 'ratelimit-legacy',
            resetMs: Number.MAX_SAFE_INTEGER,
        });
    });

    it.each(['-1', 'abc', '', '1e3', '+5', '0x10'])('ignores a malformed remaining %j', (value) => {
        expect(parseRateLimitHeaders({ 'ratelimit-remaining': value, 'ratelimit-limit': '60' }, NOW)).toEqual({
            source: 'ratelimit-legacy',
            limit: 60,
        });
    });
});

describe('parseRateLimitHeaders: X-RateLimit-*', () => {
    it('reads an epoch-seconds reset (GitHub style)', () => {
        const headers = {
            'X-RateLimit-Limit': '5000',
            'X-RateLimit-Remaining': '4999',
            'X-RateLimit-Reset': String(NOW_EPOCH_SECONDS + 120),
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'x-ratelimit',
            remaining: 4999,
            limit: 5000,
            resetMs: 120_000,
        });
    });

    it('reads a delta-seconds reset', () => {
        expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '60' }, NOW)).toEqual({
            source: 'x-ratelimit',
            resetMs: 60_000,
        });
    });

    it('reads a value just below 2024-01-01 as epoch seconds as a delta', () => {
        expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '1704067199' }, NOW)).toEqual({
            source: 'x-ratelimit',
            resetMs: 1_704_067_199_000,
        });
    });

    it('reads 2024-01-01 as epoch seconds as a timestamp (already past: reset now)', () => {
        expect(parseRateLimitHeaders({ 'x-ratelimit-reset': '1704067200' }, NOW)).toEqual({
            source: 'x-ratelimit',
            resetMs: 0,
        });
    });

    it('waits until an epoch reset when the quota is exhausted', () => {
        const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW_EPOCH_SECONDS + 90) };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'x-ratelimit',
            waitMs: 90_000,
            remaining: 0,
            resetMs: 90_000,
        });
    });

    it('does not wait when an exhausted quota reset in the past', () => {
        const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW_EPOCH_SECONDS - 10) };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'x-ratelimit', remaining: 0, resetMs: 0 });
    });

    it('floors decimal counts and keeps decimal resets', () => {
        const headers = { 'x-ratelimit-remaining': '599.0', 'x-ratelimit-limit': '600.7', 'x-ratelimit-reset': '2.5' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'x-ratelimit',
            remaining: 599,
            limit: 600,
            resetMs: 2_500,
        });
    });

    it('uses the first valid value of a repeated header', () => {
        expect(parseRateLimitHeaders({ 'x-ratelimit-remaining': ['n/a', '7', '8'] }, NOW)).toEqual({
            source: 'x-ratelimit',
            remaining: 7,
        });
    });

    it('uses the first member of a comma-joined repeat', () => {
        expect(parseRateLimitHeaders({ 'x-ratelimit-remaining': '7, 8' }, NOW)).toEqual({
            source: 'x-ratelimit',
            remaining: 7,
        });
    });
});

describe('parseRateLimitHeaders: precedence and merging', () => {
    it('prefers Retry-After for the wait and keeps quota details from IETF fields', () => {
        const headers = {
            'Retry-After': '10',
            'RateLimit-Policy': '"p";q=100;w=60',
            RateLimit: '"p";r=0;t=60',
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'retry-after',
            waitMs: 10_000,
            remaining: 0,
            limit: 100,
            resetMs: 60_000,
            windowMs: 60_000,
        });
    });

    it('prefers Retry-After even when it is shorter than an exhausted quota reset', () => {
        const headers = { 'retry-after': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '3600' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'retry-after',
            waitMs: 1_000,
            remaining: 0,
            resetMs: 3_600_000,
        });
    });

    it('falls back to the quota wait when Retry-After is unusable', () => {
        const headers = { 'retry-after': '-1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'x-ratelimit',
            waitMs: 30_000,
            remaining: 0,
            resetMs: 30_000,
        });
    });

    it('prefers IETF fields over legacy over X- headers', () => {
        const headers = {
            ratelimit: '"p";r=1;t=10',
            'ratelimit-remaining': '2',
            'ratelimit-reset': '20',
            'x-ratelimit-remaining': '3',
            'x-ratelimit-reset': '30',
        };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'ratelimit', remaining: 1, resetMs: 10_000 });
    });

    it('prefers legacy over X- headers', () => {
        const headers = { 'ratelimit-remaining': '2', 'x-ratelimit-remaining': '3', 'x-ratelimit-limit': '60' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({ source: 'ratelimit-legacy', remaining: 2, limit: 60 });
    });

    it('fills fields missing from a higher source with a lower one', () => {
        const headers = { RateLimit: '"p";r=0;t=15', 'X-RateLimit-Limit': '60', 'X-RateLimit-Reset': '99' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit',
            waitMs: 15_000,
            remaining: 0,
            limit: 60,
            resetMs: 15_000,
        });
    });

    it('derives the wait from merged fields', () => {
        const headers = { 'ratelimit-remaining': '0', 'x-ratelimit-reset': '45' };
        expect(parseRateLimitHeaders(headers, NOW)).toEqual({
            source: 'ratelimit-legacy',
            waitMs: 45_000,
            remaining: 0,
            resetMs: 45_000,
        });
    });
});
