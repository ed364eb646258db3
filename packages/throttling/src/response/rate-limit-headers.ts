/**
 * Extraction of rate-limit hints from HTTP response headers.
 *
 * Servers announce limits in several generations of headers; this module reads all of them and
 * merges what it finds, so the throttling layer sees one answer regardless of the server's dialect.
 */

// Parsed values are narrowed by hand below: a malformed header must be ignored, never trusted.
import * as structuredHeaders from 'structured-headers';

import { parseRetryAfter } from './retry-after';

/** Which header family a {@link RateLimitInfo} was primarily derived from. */
export type RateLimitSource = 'retry-after' | 'ratelimit' | 'ratelimit-legacy' | 'x-ratelimit';

/**
 * Rate-limit state announced by a server, normalised to milliseconds relative to the response.
 */
export interface RateLimitInfo {
    /** The highest-precedence header family that contributed to this result. */
    source: RateLimitSource;
    /** Must not send before `now + waitMs`. Always > 0 when present. */
    waitMs?: number;
    /** Requests left in the current quota window. */
    remaining?: number;
    /** Quota size of the window. */
    limit?: number;
    /** Milliseconds until the quota window resets. */
    resetMs?: number;
    /** Policy window length, if the server announced it. */
    windowMs?: number;
}

/** Header map as found on Node/Crawlee responses; names may use any case. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

type Quota = Omit<RateLimitInfo, 'source' | 'waitMs'>;

type QuotaSource = Exclude<RateLimitSource, 'retry-after'>;

const QUOTA_FIELDS = ['remaining', 'limit', 'resetMs', 'windowMs'] as const;

/**
 * `X-RateLimit-Reset` is epoch seconds for some servers (GitHub) and delta seconds for others.
 * Any value at or above 2024-01-01T00:00:00Z as epoch seconds is read as a timestamp: as a delta
 * it would be a wait of over 50 years, which no server means.
 */
const EPOCH_RESET_THRESHOLD_SECONDS = 1_704_067_200;

const NON_NEGATIVE_DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * Reads rate-limit information from response headers.
 *
 * Sources, highest precedence first: `Retry-After`; the IETF structured fields `RateLimit` and
 * `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers); the legacy `RateLimit-Limit`,
 * `RateLimit-Remaining`, `RateLimit-Reset`; and `X-RateLimit-Limit`, `X-RateLimit-Remaining`,
 * `X-RateLimit-Reset`. `waitMs` comes from `Retry-After`, or else from the quota when it is
 * exhausted (`remaining === 0`) with a reset in the future. Each quota field is taken from the
 * highest-precedence source that provides a valid value for it. Malformed values are ignored one by
 * one; this function never throws.
 *
 * @param headers - response headers; names are matched case-insensitively.
 * @param nowMs - the current time in epoch milliseconds (for HTTP-dates and epoch resets).
 * @returns the merged information, or `undefined` when no header yielded anything usable.
 */
export function parseRateLimitHeaders(headers: ResponseHeaders, nowMs: number): RateLimitInfo | undefined {
    const lookup = indexHeaders(headers);
    const valuesOf = (name: string): string[] => lookup.get(name) ?? [];

    const retryAfterMs = parseRetryAfter(valuesOf('retry-after'), nowMs);
    const quotaSources: [QuotaSource, Quota][] = [
        ['ratelimit', parseIetfQuota(valuesOf('ratelimit'), valuesOf('ratelimit-policy'))],
        ['ratelimit-legacy', parseSplitQuota(valuesOf, 'ratelimit-', () => false, nowMs)],
        ['x-ratelimit', parseSplitQuota(valuesOf, 'x-ratelimit-', isEpochReset, nowMs)],
    ];

    let source: RateLimitSource | undefined = retryAfterMs !== undefined ? 'retry-after' : undefined;
    const merged: Quota = {};
    for (const [quotaSource, quota] of quotaSources) {
        for (const field of QUOTA_FIELDS) {
            if (merged[field] !== undefined || quota[field] === undefined) continue;
            merged[field] = quota[field];
            source ??= quotaSource;
        }
    }
    if (source === undefined) return undefined;

    const info: RateLimitInfo = { source };
    const waitMs = retryAfterMs ?? exhaustedQuotaWait(merged);
    if (waitMs !== undefined) info.waitMs = waitMs;
    for (const field of QUOTA_FIELDS) {
        if (merged[field] !== undefined) info[field] = merged[field];
    }
    return info;
}

/** Lower-cases names and gathers every value, since two spellings of one name may coexist. */
function indexHeaders(headers: ResponseHeaders): Map<string, string[]> {
    const lookup = new Map<string, string[]>();
    for (const [name, value] of Object.entries(headers ?? {})) {
        const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
        if (values.length === 0) continue;
        const key = name.toLowerCase();
        lookup.set(key, [...(lookup.get(key) ?? []), ...values]);
    }
    return lookup;
}

function exhaustedQuotaWait(quota: Quota): number | undefined {
    if (quota.remaining !== 0 || quota.resetMs === undefined || quota.resetMs <= 0) return undefined;
    return quota.resetMs;
}

interface StructuredMember {
    name: string | undefined;
    params: Map<string, unknown>;
}

/**
 * Reads `RateLimit` (`"name";r=…;t=…`) and `RateLimit-Policy` (`"name";q=…;w=…`).
 * When several limits apply, the one closest to exhaustion governs what the client may do.
 */
function parseIetfQuota(rateLimitValues: string[], policyValues: string[]): Quota {
    const policies = parseStructuredList(policyValues)
        .map((member) => ({
            name: member.name,
            quota: readParam(member.params, 'q', isCount),
            window: readParam(member.params, 'w', isPositiveDuration),
        }))
        .filter((policy) => policy.quota !== undefined || policy.window !== undefined);
    const limits = parseStructuredList(rateLimitValues)
        .map((member) => ({
            name: member.name,
            remaining: readParam(member.params, 'r', isCount),
            reset: readParam(member.params, 't', isDuration),
        }))
        .filter((limit): limit is typeof limit & { remaining: number } => limit.remaining !== undefined);

    const quota: Quota = {};
    if (limits.length > 0) {
        // Fewest requests left wins; on a tie, the later reset keeps the client waiting longest.
        const governing = leastThenLongest(
            limits,
            (l) => l.remaining,
            (l) => l.reset,
        );
        quota.remaining = governing.remaining;
        if (governing.reset !== undefined) quota.resetMs = secondsToMs(governing.reset);
        // An unnamed limit cannot be tied to a policy without guessing.
        const policy = governing.name === undefined ? undefined : policies.find((p) => p.name === governing.name);
        if (policy?.quota !== undefined) quota.limit = policy.quota;
        if (policy?.window !== undefined) quota.windowMs = secondsToMs(policy.window);
    } else {
        // Without remaining counts, the smallest quota is the best available notion of "most restrictive".
        const withQuota = policies.filter((p): p is typeof p & { quota: number } => p.quota !== undefined);
        if (withQuota.length > 0) {
            const smallest = leastThenLongest(
                withQuota,
                (p) => p.quota,
                (p) => p.window,
            );
            quota.limit = smallest.quota;
            if (smallest.window !== undefined) quota.windowMs = secondsToMs(smallest.window);
        }
    }
    return quota;
}

/**
 * Parses a structured-field List (RFC 9651). Repeated field lines form one field, so they are
 * joined before parsing; a parse error discards the whole field, as RFC 9651 requires.
 */
function parseStructuredList(values: string[]): StructuredMember[] {
    if (values.length === 0) return [];
    let list: unknown;
    try {
        list = structuredHeaders.parseList(values.join(', '));
    } catch {
        return [];
    }
    if (!Array.isArray(list)) return [];
    const members: StructuredMember[] = [];
    for (const member of list) {
        if (!Array.isArray(member) || member.length !== 2) continue;
        const [value, params] = member as [unknown, unknown];
        // Inner lists have no meaning in these fields.
        if (Array.isArray(value) || !(params instanceof Map)) continue;
        members.push({ name: memberName(value), params });
    }
    return members;
}

function memberName(value: unknown): string | undefined {
    if (typeof value === 'string') return value;
    // Some servers send a Token instead of a String; both name the policy the same way.
    if (value instanceof structuredHeaders.Token) return String(value);
    return undefined;
}

function readParam(params: Map<string, unknown>, key: string, accept: (n: number) => boolean): number | undefined {
    const value = params.get(key);
    return typeof value === 'number' && accept(value) ? value : undefined;
}

function isCount(n: number): boolean {
    return Number.isSafeInteger(n) && n >= 0;
}

function isDuration(n: number): boolean {
    return Number.isFinite(n) && n >= 0;
}

function isPositiveDuration(n: number): boolean {
    return Number.isFinite(n) && n > 0;
}

function isEpochReset(seconds: number): boolean {
    return seconds >= EPOCH_RESET_THRESHOLD_SECONDS;
}

/** Reads the `<prefix>Limit` / `<prefix>Remaining` / `<prefix>Reset` header trio. */
function parseSplitQuota(
    valuesOf: (name: string) => string[],
    prefix: string,
    isEpoch: (seconds: number) => boolean,
    nowMs: number,
): Quota {
    const quota: Quota = {};
    const limit = firstNumber(valuesOf(`${prefix}limit`));
    const remaining = firstNumber(valuesOf(`${prefix}remaining`));
    const reset = firstNumber(valuesOf(`${prefix}reset`));
    // Some servers send counts as decimals (`599.0`); a partial request is not a request. A count
    // beyond a safe integer is malformed, as in the structured fields (`isCount`).
    if (limit !== undefined && isCount(Math.floor(limit))) quota.limit = Math.floor(limit);
    if (remaining !== undefined && isCount(Math.floor(remaining))) quota.remaining = Math.floor(remaining);
    if (reset !== undefined) {
        const resetMs = isEpoch(reset) ? secondsToMs(reset) - nowMs : secondsToMs(reset);
        // A reset already in the past means the window has reset: nothing left to wait for. A `now`
        // that is not a finite time cannot place an epoch reset at all.
        if (Number.isFinite(resetMs)) quota.resetMs = Math.min(Math.max(0, resetMs), Number.MAX_SAFE_INTEGER);
    }
    return quota;
}

/**
 * First non-negative number among the values. Members of a comma-joined repeat and parameters
 * (`100;w=60`, as in older drafts) are tolerated; anything else in a member makes it invalid.
 */
function firstNumber(values: string[]): number | undefined {
    for (const value of values) {
        for (const member of value.split(',')) {
            const text = member.split(';')[0].trim();
            if (!NON_NEGATIVE_DECIMAL.test(text)) continue;
            const n = Number(text);
            if (Number.isFinite(n)) return n;
        }
    }
    return undefined;
}

function secondsToMs(seconds: number): number {
    return Math.min(Math.round(seconds * 1000), Number.MAX_SAFE_INTEGER);
}

/** The item with the least `amount`; on a tie, the one with the longest `period` (none counts as the shortest). */
function leastThenLongest<T>(
    items: readonly T[],
    amount: (item: T) => number,
    period: (item: T) => number | undefined,
): T {
    return items.reduce((best, next) => {
        if (amount(next) !== amount(best)) return amount(next) < amount(best) ? next : best;
        return (period(next) ?? -1) > (period(best) ?? -1) ? next : best;
    });
}
