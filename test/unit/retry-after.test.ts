import { parseRetryAfter } from 'crawlee-throttling';

// Sun, 15 Jun 2025 12:00:00 GMT
const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);

describe('parseRetryAfter: delay-seconds', () => {
    it.each([
        ['120', 120_000],
        ['1', 1_000],
        ['05', 5_000],
        ['  7  ', 7_000],
        ['\t3\t', 3_000],
    ])('reads %j as %d ms', (value, expected) => {
        expect(parseRetryAfter(value, NOW)).toBe(expected);
    });

    it.each(['-5', '1.5', '+3', '5s', ' ', '', '1 2', '1e3', '0x10', 'soon', '٣', '３'])('rejects %j', (value) => {
        expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });

    it.each(['0', '000', ' 0 '])('treats %j ("no delay") as no usable header', (value) => {
        expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });

    it('does not depend on the current time', () => {
        expect(parseRetryAfter('30', Number.NaN)).toBe(30_000);
    });

    it('returns very large values as-is while they stay safe integers', () => {
        expect(parseRetryAfter('9007199254740', NOW)).toBe(9_007_199_254_740_000);
    });

    it('caps values beyond Number.MAX_SAFE_INTEGER', () => {
        expect(parseRetryAfter('9007199254741', NOW)).toBe(Number.MAX_SAFE_INTEGER);
        expect(parseRetryAfter('9'.repeat(400), NOW)).toBe(Number.MAX_SAFE_INTEGER);
    });
});

describe('parseRetryAfter: IMF-fixdate', () => {
    it('reads a future date relative to now', () => {
        expect(parseRetryAfter('Sun, 15 Jun 2025 12:01:30 GMT', NOW)).toBe(90_000);
    });

    it('trims surrounding whitespace', () => {
        expect(parseRetryAfter('  Sun, 15 Jun 2025 12:00:10 GMT \t', NOW)).toBe(10_000);
    });

    it('reads a date months ahead', () => {
        expect(parseRetryAfter('Tue, 01 Jul 2025 00:00:00 GMT', NOW)).toBe(Date.UTC(2025, 6, 1) - NOW);
    });

    it('accepts 29 February in a leap year', () => {
        expect(parseRetryAfter('Tue, 29 Feb 2028 00:00:00 GMT', NOW)).toBe(Date.UTC(2028, 1, 29) - NOW);
    });

    it('accepts a leap second', () => {
        expect(parseRetryAfter('Sun, 15 Jun 2025 12:00:60 GMT', NOW)).toBe(60_000);
    });

    it('returns undefined for a date equal to now', () => {
        expect(parseRetryAfter('Sun, 15 Jun 2025 12:00:00 GMT', NOW)).toBeUndefined();
    });

    it('returns undefined for a date in the past', () => {
        expect(parseRetryAfter('Sun, 15 Jun 2025 11:59:59 GMT', NOW)).toBeUndefined();
        expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBeUndefined();
    });

    it.each([
        ['30 February', 'Mon, 30 Feb 2026 00:00:00 GMT'],
        ['29 February in a common year', 'Mon, 29 Feb 2027 00:00:00 GMT'],
        ['31 April', 'Fri, 31 Apr 2026 00:00:00 GMT'],
        ['day 00', 'Wed, 00 Jul 2026 00:00:00 GMT'],
        ['hour 25', 'Wed, 01 Jul 2026 25:00:00 GMT'],
        ['hour 24', 'Wed, 01 Jul 2026 24:00:00 GMT'],
        ['minute 60', 'Wed, 01 Jul 2026 10:60:00 GMT'],
        ['second 61', 'Wed, 01 Jul 2026 10:00:61 GMT'],
    ])('rejects an impossible date (%s)', (_label, value) => {
        expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });

    it.each([
        ['single-digit day', 'Wed, 1 Jul 2026 00:00:00 GMT'],
        ['numeric zone', 'Wed, 01 Jul 2026 00:00:00 +0000'],
        ['UTC instead of GMT', 'Wed, 01 Jul 2026 00:00:00 UTC'],
        ['lower-case gmt', 'Wed, 01 Jul 2026 00:00:00 gmt'],
        ['no zone', 'Wed, 01 Jul 2026 00:00:00'],
        ['no day name', '01 Jul 2026 00:00:00 GMT'],
        ['unknown month', 'Wed, 01 Jly 2026 00:00:00 GMT'],
        ['ISO 8601', '2026-07-01T00:00:00Z'],
        ['extra text', 'Wed, 01 Jul 2026 00:00:00 GMT later'],
        ['missing seconds', 'Wed, 01 Jul 2026 00:00 GMT'],
    ])('rejects a date that Date.parse would accept or guess at (%s)', (_label, value) => {
        expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });
});

describe('parseRetryAfter: obsolete RFC 850 date', () => {
    it('reads a future date', () => {
        expect(parseRetryAfter('Sunday, 15-Jun-25 12:00:10 GMT', NOW)).toBe(10_000);
    });

    it('reads the RFC example year 94 as 1994, hence in the past', () => {
        expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBeUndefined();
    });

    it('reads a year exactly 50 years ahead as the future (2075)', () => {
        expect(parseRetryAfter('Tuesday, 01-Jan-75 00:00:00 GMT', NOW)).toBe(Date.UTC(2075, 0, 1) - NOW);
    });

    it('reads a year more than 50 years ahead as the past century (76 → 1976)', () => {
        expect(parseRetryAfter('Wednesday, 01-Jan-76 00:00:00 GMT', NOW)).toBeUndefined();
    });

    it('late in a century, reads a small year as the next century', () => {
        const now = Date.UTC(2099, 5, 1);
        expect(parseRetryAfter('Saturday, 01-Jan-01 00:00:00 GMT', now)).toBe(Date.UTC(2101, 0, 1) - now);
    });

    it('rejects an invalid calendar date', () => {
        expect(parseRetryAfter('Monday, 30-Feb-26 00:00:00 GMT', NOW)).toBeUndefined();
    });

    it.each([
        ['short day name', 'Sun, 15-Jun-25 12:00:10 GMT'],
        ['four-digit year', 'Sunday, 15-Jun-2025 12:00:10 GMT'],
        ['no zone', 'Sunday, 15-Jun-25 12:00:10'],
    ])('rejects a malformed date (%s)', (_label, value) => {
        expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });

    it('returns undefined when now is not a valid time', () => {
        expect(parseRetryAfter('Sunday, 15-Jun-25 12:00:10 GMT', Number.NaN)).toBeUndefined();
    });
});

describe('parseRetryAfter: asctime date', () => {
    it('reads a space-padded single-digit day as UTC', () => {
        expect(parseRetryAfter('Tue Jul  1 00:00:00 2025', NOW)).toBe(Date.UTC(2025, 6, 1) - NOW);
    });

    it('reads a two-digit day', () => {
        expect(parseRetryAfter('Sun Jun 15 12:00:05 2025', NOW)).toBe(5_000);
    });

    it('returns undefined for the RFC example date (in the past)', () => {
        expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', NOW)).toBeUndefined();
    });

    it.each([
        ['single space before a one-digit day', 'Tue Jul 1 00:00:00 2025'],
        ['a zone suffix', 'Tue Jul  1 00:00:00 2025 GMT'],
        ['31 June', 'Tue Jun 31 00:00:00 2025'],
        ['hour 25', 'Tue Jul  1 25:00:00 2025'],
    ])('rejects %s', (_label, value) => {
        expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });
});

describe('parseRetryAfter: absent and repeated headers', () => {
    it.each([undefined, null])('returns undefined for %p', (value) => {
        expect(parseRetryAfter(value, NOW)).toBeUndefined();
    });

    it('returns undefined for an empty array', () => {
        expect(parseRetryAfter([], NOW)).toBeUndefined();
    });

    it('uses the first value of a repeated header', () => {
        expect(parseRetryAfter(['10', '20'], NOW)).toBe(10_000);
    });

    it('skips invalid, zero and past values to reach the first usable one', () => {
        expect(
            parseRetryAfter(['soon', '0', 'Sun, 06 Nov 1994 08:49:37 GMT', 'Sun, 15 Jun 2025 12:00:20 GMT', '5'], NOW),
        ).toBe(20_000);
    });

    it('returns undefined when no value of a repeated header is usable', () => {
        expect(parseRetryAfter(['-1', '1.5', ''], NOW)).toBeUndefined();
    });
});

describe('parseRetryAfter: whole milliseconds', () => {
    it('a date against a fractional now gives a whole, positive wait (fast-check found -5e-324)', () => {
        expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', -5e-324)).toBe(1);
        expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:01 GMT', 0.25)).toBe(1_000);
    });
});
