/**
 * Parsing of the `Retry-After` response header (RFC 9110 §10.2.3).
 *
 * The parser is deliberately strict: a wrong wait is worse than no wait, because the caller has a
 * sound fallback (exponential backoff) for "no usable header" but cannot tell a misread header
 * from a real one. `Date.parse` is avoided for that reason: it accepts strings such as `"1"`.
 */

const DELAY_SECONDS = /^\d+$/;

// RFC 9110 §5.5 trims only optional whitespace (SP / HTAB) around a field value. String#trim also
// drops NBSP, line breaks and other Unicode spaces, which would let `"\u00a05"` or `"5\n"` pass as `5`.
const SURROUNDING_OWS = /^[ \t]+|[ \t]+$/g;

const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const DAY_NAME_LONG = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
// Sunday, 06-Nov-94 08:49:37 GMT
const RFC850_DATE = new RegExp(`^${DAY_NAME_LONG}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
// Sun Nov  6 08:49:37 1994 (the day is space-padded, not zero-padded, in the canonical form)
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

interface DateFields {
    year: number;
    month: string;
    day: string;
    hour: string;
    minute: string;
    second: string;
}

/**
 * Parses a `Retry-After` header value into a wait in milliseconds relative to `nowMs`.
 *
 * Accepts delay-seconds (ASCII digits only) and the three HTTP-date formats (IMF-fixdate, RFC 850,
 * asctime). For a repeated header (array), the first value that yields a usable wait is used.
 * Waits above `Number.MAX_SAFE_INTEGER` are capped there; capping to a sensible maximum is the
 * caller's job (`DomainState.recordRateLimit` applies `maxDelaySecs`). A wait may exceed what
 * `setTimeout` takes (2^31 − 1 ms, about 24.8 days), so it must never reach a timer uncapped.
 *
 * @param value - the raw header value(s), as found on a response.
 * @param nowMs - the current time in epoch milliseconds, against which HTTP-dates are resolved.
 * @returns the wait in milliseconds (always > 0), or `undefined` when the header is absent,
 *   malformed, zero, or names a moment that is not in the future.
 */
export function parseRetryAfter(value: string | string[] | undefined | null, nowMs: number): number | undefined {
    if (value === undefined || value === null) return undefined;
    const candidates = Array.isArray(value) ? value : [value];
    for (const candidate of candidates) {
        // Header values come from untyped sources at runtime; never throw on them.
        if (typeof candidate !== 'string') continue;
        const waitMs = parseSingleValue(candidate.replace(SURROUNDING_OWS, ''), nowMs);
        if (waitMs !== undefined) return waitMs;
    }
    return undefined;
}

function parseSingleValue(text: string, nowMs: number): number | undefined {
    if (DELAY_SECONDS.test(text)) {
        // A huge digit string becomes Infinity; the cap keeps the result a safe integer.
        const waitMs = Math.min(Number(text) * 1000, Number.MAX_SAFE_INTEGER);
        // Zero means "retry now", which the caller must not treat as an instruction to hammer.
        return waitMs > 0 ? waitMs : undefined;
    }
    const dateMs = parseHttpDate(text, nowMs);
    if (dateMs === undefined) return undefined;
    // Whole milliseconds: a fractional `now` must not yield a sub-millisecond (or denormal) wait.
    const waitMs = Math.ceil(dateMs - nowMs);
    if (!Number.isFinite(waitMs) || waitMs <= 0) return undefined;
    return Math.min(waitMs, Number.MAX_SAFE_INTEGER);
}

/** Returns epoch milliseconds for a strictly valid HTTP-date, else `undefined`. */
function parseHttpDate(text: string, nowMs: number): number | undefined {
    let match = IMF_FIXDATE.exec(text);
    if (match) {
        const [, day, month, year, hour, minute, second] = match;
        return toEpochMs({ year: Number(year), month, day, hour, minute, second });
    }
    match = RFC850_DATE.exec(text);
    if (match) {
        const [, day, month, twoDigitYear, hour, minute, second] = match;
        const year = expandTwoDigitYear(Number(twoDigitYear), nowMs);
        if (year === undefined) return undefined;
        return toEpochMs({ year, month, day, hour, minute, second });
    }
    match = ASCTIME_DATE.exec(text);
    if (match) {
        const [, month, day, hour, minute, second, year] = match;
        return toEpochMs({ year: Number(year), month, day: day.trim(), hour, minute, second });
    }
    return undefined;
}

/**
 * RFC 9110 §5.6.7: a two-digit year that appears to be more than 50 years in the future is in
 * the past century. The year is therefore chosen from the window (now − 50, now + 50]: sliding
 * rather than "same century" so that late in a century (e.g. 2099) `01` still means the near
 * future. Years are compared, not full timestamps, which is the usual reading.
 */
function expandTwoDigitYear(twoDigitYear: number, nowMs: number): number | undefined {
    const currentYear = new Date(nowMs).getUTCFullYear();
    if (Number.isNaN(currentYear)) return undefined;
    const year = currentYear - (currentYear % 100) + twoDigitYear;
    if (year > currentYear + 50) return year - 100;
    if (year <= currentYear - 50) return year + 100;
    return year;
}

function toEpochMs(fields: DateFields): number | undefined {
    const monthIndex = MONTHS.indexOf(fields.month);
    const day = Number(fields.day);
    const hour = Number(fields.hour);
    const minute = Number(fields.minute);
    const second = Number(fields.second);
    if (day < 1 || day > daysInMonth(fields.year, monthIndex)) return undefined;
    // 60 is tolerated because IMF (RFC 5322) allows a leap second; it rolls over to the next minute.
    if (hour > 23 || minute > 59 || second > 60) return undefined;
    // Date.UTC maps years 0–99 to 1900–1999, so the full year is set explicitly.
    const date = new Date(0);
    date.setUTCFullYear(fields.year, monthIndex, day);
    date.setUTCHours(hour, minute, second, 0);
    return date.getTime();
}

function daysInMonth(year: number, monthIndex: number): number {
    if (monthIndex === 1) {
        const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
        return leap ? 29 : 28;
    }
    return [3, 5, 8, 10].includes(monthIndex) ? 30 : 31;
}
