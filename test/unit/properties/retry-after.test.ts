import fc from 'fast-check';

import { DomainState } from '../../../packages/throttling/src/pacing/domain-state';
import { parseRetryAfter } from 'crawlee-throttling';
import { fcParams } from './fc-params';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const YEAR_MS = 365.25 * 24 * 3600 * 1000;
// 2000-01-01 to 2100-01-01: the "now" of any crawl this code will see.
const NOW = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) });

const pad = (n: number, width = 2, fill = '0') => String(n).padStart(width, fill);
const time = (d: Date) => `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

// Written from RFC 9110 §5.6.7, independently of the parser's regexes.
const FORMATS: Record<string, (d: Date) => string> = {
    'IMF-fixdate': (d) =>
        `${DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCFullYear(), 4)} ${time(d)} GMT`,
    'RFC 850': (d) =>
        `${LONG_DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${pad(d.getUTCFullYear() % 100)} ${time(d)} GMT`,
    asctime: (d) =>
        `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate(), 2, ' ')} ${time(d)} ${pad(d.getUTCFullYear(), 4)}`,
};

// Loose shapes of the only accepted forms, after removing optional whitespace (SP / HTAB).
const ACCEPTED_SHAPES = [
    /^\d+$/,
    /^[A-Z][a-z]{2,8}, \d{2}[ -][A-Z][a-z]{2}[ -](?:\d{2}|\d{4}) \d{2}:\d{2}:\d{2} GMT$/,
    /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];
const stripOws = (s: string) => s.replace(/^[ \t]+|[ \t]+$/g, '');

/** A valid header of any kind, then (maybe) damaged by one edit: the inputs a strict parser must sort. */
const nearlyValidHeader = fc
    .tuple(
        fc.oneof(
            fc.stringMatching(/^\d{1,12}$/),
            fc
                .tuple(fc.constantFrom(...Object.values(FORMATS)), fc.date({ noInvalidDate: true }))
                .map(([f, d]) => f(d)),
        ),
        fc.nat(),
        fc.constantFrom('', '-', '+', '.', 'e', ' ', '\u00a0', '\u2028', '٣', '３', 'x', '0', '\n', ','),
        fc.constantFrom('insert', 'replace', 'delete', 'none'),
    )
    .map(([valid, at, char, edit]) => {
        const i = at % (valid.length + 1);
        if (edit === 'insert') return valid.slice(0, i) + char + valid.slice(i);
        if (edit === 'replace') return valid.slice(0, i) + char + valid.slice(i + 1);
        if (edit === 'delete') return valid.slice(0, i) + valid.slice(i + 1);
        return valid;
    });

const anyHeaderValue = fc.oneof(
    fc.string({ unit: 'binary' }),
    nearlyValidHeader,
    fc.array(fc.oneof(fc.string(), nearlyValidHeader, fc.anything()), { maxLength: 4 }),
    fc.constantFrom(undefined, null),
);

describe('parseRetryAfter: properties', () => {
    test('never throws, and any wait is a positive safe integer (finite, not NaN)', () => {
        fc.assert(
            fc.property(anyHeaderValue, fc.oneof(NOW, fc.double()), (value, now) => {
                const wait = parseRetryAfter(value as string | string[] | undefined, now);
                return wait === undefined || (Number.isSafeInteger(wait) && wait > 0);
            }),
            fcParams(500),
        );
    });

    test('accepts only delay-seconds or an HTTP-date (after optional SP/HTAB)', () => {
        fc.assert(
            fc.property(nearlyValidHeader, NOW, (value, now) => {
                if (parseRetryAfter(value, now) === undefined) return true;
                return ACCEPTED_SHAPES.some((shape) => shape.test(stripOws(value)));
            }),
            fcParams(500),
        );
    });

    test('delay-seconds of any length: seconds × 1000, capped at MAX_SAFE_INTEGER; 0 is no wait', () => {
        const ows = fc.stringMatching(/^[ \t]{0,3}$/);
        fc.assert(
            fc.property(ows, fc.stringMatching(/^\d{1,30}$/), ows, NOW, (before, digits, after, now) => {
                const expected =
                    Number(digits) === 0 ? undefined : Math.min(Number(digits) * 1000, Number.MAX_SAFE_INTEGER);
                expect(parseRetryAfter(before + digits + after, now)).toBe(expected);
            }),
            fcParams(300),
        );
    });

    test.each(Object.keys(FORMATS))('%s: a future date is its distance from now, a past one no wait', (format) => {
        // ±48 years keeps RFC 850's two-digit year inside the RFC 9110 §5.6.7 window.
        const offset = fc.integer({ min: -48 * YEAR_MS, max: 48 * YEAR_MS });
        fc.assert(
            fc.property(NOW, offset, (now, off) => {
                const at = Math.floor((now + off) / 1000) * 1000;
                const expected = at > now ? at - now : undefined;
                expect(parseRetryAfter(FORMATS[format]!(new Date(at)), now)).toBe(expected);
            }),
            fcParams(300),
        );
    });

    test('a repeated header uses the first value that gives a wait', () => {
        fc.assert(
            fc.property(fc.array(nearlyValidHeader, { maxLength: 5 }), NOW, (values, now) => {
                const first = values.map((v) => parseRetryAfter(v, now)).find((w) => w !== undefined);
                expect(parseRetryAfter(values, now)).toBe(first);
            }),
            fcParams(300),
        );
    });

    test('the backoff caps any parsed wait at maxDelayMs, so no timer gets a wait it cannot take', () => {
        // The parser stops at MAX_SAFE_INTEGER; the cap that matters (maxDelaySecs) is applied by
        // DomainState.recordRateLimit, both when it escalates and when it extends a running backoff.
        const maxDelayMs = fc.integer({ min: 1, max: 2_147_483_647 });
        fc.assert(
            fc.property(fc.array(anyHeaderValue, { maxLength: 3 }), NOW, maxDelayMs, (headers, now, max) => {
                const state = new DomainState('example.com');
                for (const header of headers) {
                    const wait = parseRetryAfter(header as string | undefined, now);
                    state.recordRateLimit(now, wait, {
                        backoffMinDelayMs: 1,
                        backoffMaxDelayMs: max,
                        random: () => 0.5,
                    });
                    expect(state.backoffUntil - now).toBeLessThanOrEqual(max);
                }
            }),
            fcParams(300),
        );
    });
});

describe('parseRetryAfter: huge values', () => {
    test('30 days is read as such; the cap is the backoff’s, not the parser’s', () => {
        expect(parseRetryAfter('2592000', Date.UTC(2025, 0, 1))).toBe(2_592_000_000);
    });

    test('a value beyond any number is capped at MAX_SAFE_INTEGER, never Infinity', () => {
        expect(parseRetryAfter('99999999999999999999', 0)).toBe(Number.MAX_SAFE_INTEGER);
        expect(parseRetryAfter('9'.repeat(400), 0)).toBe(Number.MAX_SAFE_INTEGER);
    });
});

describe('parseRetryAfter: regression, only SP and HTAB are optional whitespace', () => {
    // Found by the strictness property: String#trim made these read as 5 s.
    test.each(['\u00a05', '5\u00a0', '\n5', '5\r\n', '\u20285', '\ufeff5', '\u30005'])('rejects %j', (value) => {
        expect(parseRetryAfter(value, 0)).toBeUndefined();
    });

    test('still accepts SP and HTAB around a value', () => {
        expect(parseRetryAfter(' \t5\t ', 0)).toBe(5_000);
    });
});
