import fc from 'fast-check';

import type { ResponseHeaders } from '../../../packages/throttling/src/response/rate-limit-headers';
import { parseRateLimitHeaders, parseRetryAfter } from 'crawlee-throttling';
import { fcParams } from './fc-params';

const NOW = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) });

const NAMES = [
    'retry-after',
    'ratelimit',
    'ratelimit-policy',
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
];

/** A header name we read, in any letter case, or something else entirely. */
const headerName = fc.oneof(
    fc
        .tuple(fc.constantFrom(...NAMES), fc.array(fc.boolean(), { minLength: 25, maxLength: 25 }))
        .map(([name, upper]) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')),
    fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty'),
    fc.string(),
);

const numberText = fc.oneof(
    fc.nat().map(String),
    fc.double().map(String),
    fc.constantFrom('0', '-1', '1.5', '599.0', '1e400', '9'.repeat(400), '0.0000001', 'NaN', 'Infinity', ''),
    fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
);

const sfNumber = fc.oneof(numberText, fc.constantFrom('-5', '1.5', '999999999999999', '1000000000000000', '?1'));
const sfMember = fc
    .tuple(
        fc.constantFrom('"default"', '"a"', 'tok', '("x" "y")', '"b"'),
        fc.array(fc.tuple(fc.constantFrom('r', 't', 'q', 'w', 'x', 'R'), sfNumber), { maxLength: 3 }),
    )
    .map(([name, params]) => name + params.map(([k, v]) => `;${k}=${v}`).join(''));

const headerValue = fc.oneof(
    numberText,
    fc.array(sfMember, { minLength: 1, maxLength: 3 }).map((m) => m.join(', ')),
    fc.array(numberText, { minLength: 1, maxLength: 3 }).map((m) => m.join(',')),
    numberText.map((n) => `${n};w=60`),
    fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
    fc.string({ unit: 'binary' }),
);

const headerMap: fc.Arbitrary<ResponseHeaders> = fc
    .array(
        fc.tuple(
            headerName,
            fc.oneof(
                headerValue,
                fc.array(headerValue, { maxLength: 3 }),
                fc.constant(undefined),
                fc.anything() as fc.Arbitrary<string>,
            ),
        ),
        { maxLength: 8 },
    )
    // fromEntries defines own properties, so "__proto__" arrives as a header as it would from JSON.
    .map((entries) => Object.fromEntries(entries) as ResponseHeaders);

const isCount = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isMs = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER;

describe('parseRateLimitHeaders: properties', () => {
    test('never throws; every number it returns is finite, non-negative and safe', () => {
        fc.assert(
            fc.property(headerMap, fc.oneof(NOW, fc.double()), (headers, now) => {
                const info = parseRateLimitHeaders(headers, now);
                if (info === undefined) return;
                expect(['retry-after', 'ratelimit', 'ratelimit-legacy', 'x-ratelimit']).toContain(info.source);
                expect(
                    Object.keys(info).every((k) =>
                        ['source', 'waitMs', 'remaining', 'limit', 'resetMs', 'windowMs'].includes(k),
                    ),
                ).toBe(true);
                if (info.waitMs !== undefined) expect(isMs(info.waitMs) && info.waitMs > 0).toBe(true);
                if (info.resetMs !== undefined) expect(isMs(info.resetMs)).toBe(true);
                if (info.windowMs !== undefined) expect(isMs(info.windowMs) && info.windowMs > 0).toBe(true);
                if (info.remaining !== undefined) expect(isCount(info.remaining)).toBe(true);
                if (info.limit !== undefined) expect(isCount(info.limit)).toBe(true);
            }),
            fcParams(500),
        );
    });

    test('a wait comes from Retry-After, or else from an exhausted quota with a reset ahead', () => {
        fc.assert(
            fc.property(headerMap, NOW, (headers, now) => {
                const info = parseRateLimitHeaders(headers, now);
                const retryAfter = Object.entries(headers)
                    .filter(([name]) => name.toLowerCase() === 'retry-after')
                    .flatMap(([, v]) => (Array.isArray(v) ? v : [v]))
                    .filter((v): v is string => typeof v === 'string');
                const fromHeader = parseRetryAfter(retryAfter, now);
                if (fromHeader !== undefined) {
                    expect(info?.source).toBe('retry-after');
                    expect(info?.waitMs).toBe(fromHeader);
                } else if (info?.waitMs !== undefined) {
                    expect(info.remaining).toBe(0);
                    expect(info.waitMs).toBe(info.resetMs);
                }
            }),
            fcParams(500),
        );
    });

    test('header names are matched case-insensitively: lower-casing them changes nothing', () => {
        fc.assert(
            fc.property(headerMap, NOW, (headers, now) => {
                // Only maps without two spellings of one name, whose merge order would be a different question.
                const lower = Object.keys(headers).map((k) => k.toLowerCase());
                fc.pre(new Set(lower).size === lower.length);
                const lowered = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
                expect(parseRateLimitHeaders(lowered, now)).toEqual(parseRateLimitHeaders(headers, now));
            }),
            fcParams(300),
        );
    });
});

describe('parseRateLimitHeaders: regressions found by the properties', () => {
    test('a split-header count beyond a safe integer is ignored, as in the structured fields', () => {
        const info = parseRateLimitHeaders(
            {
                'ratelimit-limit': '9007199254740992',
                'x-ratelimit-limit': '100',
                'ratelimit-remaining': '1'.repeat(30),
            },
            0,
        );
        // The legacy value is malformed, so the next source in precedence provides the limit.
        expect(info?.limit).toBe(100);
        expect(info?.remaining).toBeUndefined();
    });

    test('an epoch reset never becomes NaN or an unsafe number, whatever now is', () => {
        const headers = { 'x-ratelimit-reset': '1704067200', 'x-ratelimit-remaining': '0' };
        expect(parseRateLimitHeaders(headers, Number.NaN)?.resetMs).toBeUndefined();
        expect(parseRateLimitHeaders(headers, Number.NaN)?.waitMs).toBeUndefined();
        expect(parseRateLimitHeaders(headers, -Number.MAX_SAFE_INTEGER)?.resetMs).toBe(Number.MAX_SAFE_INTEGER);
    });
});
