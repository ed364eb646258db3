/**
 * Per-origin robots.txt `Crawl-delay` lookup, fetched once per origin (and user agent) and cached.
 *
 * Scope: this module extracts the crawl delay, and says when a read failed (a 5xx, a 429, no answer),
 * so the caller can pause the origin and read again, then treat a robots.txt that stays unreachable
 * as RFC 9309 §2.3.1.4 says (complete disallow, see robots-failure.ts). Allow/Disallow rules of a
 * file that was read are Crawlee's own business (`respectRobotsTxtFile`).
 */

import type { Readable } from 'node:stream';

import { DEFAULTS } from '../options/defaults';

import type { OpenedResponse } from './fetch-with-bounded-body';
import { fetchWithBoundedBody } from './fetch-with-bounded-body';

import type { RobotsFetcher, RobotsFetchResult } from '../options/robots-fetcher';

/** What robots.txt says about pacing requests to one origin. */
export type RobotsVerdict =
    | { kind: 'crawlDelay'; delayMs: number; capped: boolean; declaredSecs: number }
    | {
          kind: 'none';
          reason: 'no-crawl-delay' | 'missing' | 'client-error' | 'server-error' | 'unreachable';
          /** The status of a server error. */
          status?: number;
          /** The raw `Retry-After` header of a server error (a 503 may say when to come back). */
          retryAfterHeader?: string | string[];
      }
    | { kind: 'rateLimited'; retryAfterHeader?: string | string[] };

/** Why a robots.txt read told nothing: a server error, a 429, or no answer (a timeout, a network error). */
export interface RobotsReadFailure {
    /** In words, for logs and errors: `answered 503`, `answered 429`, `did not answer (timeout or network error)`. */
    reason: string;
    /** Whether the server answered at all (a 5xx or a 429), rather than not (a timeout, a network error). */
    answered: boolean;
    /** The raw `Retry-After` header, when the answer had one. */
    retryAfterHeader?: string | string[];
}

/**
 * The failure of a read that said nothing about the file (RFC 9309 §2.3.1.4's "unreachable": a 5xx
 * or no answer, and a 429 as Google treats it), or undefined for a read that did (a file, or a 4xx:
 * "unavailable", which means no rules).
 */
export function robotsReadFailure(verdict: RobotsVerdict): RobotsReadFailure | undefined {
    const retryAfter = (header: string | string[] | undefined) =>
        header === undefined ? {} : { retryAfterHeader: header };
    if (verdict.kind === 'rateLimited') {
        return { reason: 'answered 429', answered: true, ...retryAfter(verdict.retryAfterHeader) };
    }
    if (verdict.kind !== 'none') return undefined;
    if (verdict.reason === 'server-error') {
        return {
            reason: `answered ${verdict.status ?? '5xx'}`,
            answered: true,
            ...retryAfter(verdict.retryAfterHeader),
        };
    }
    if (verdict.reason === 'unreachable')
        return { reason: 'did not answer (timeout or network error)', answered: false };
    return undefined;
}

/** Constructor options of {@link RobotsCrawlDelayCache}. */
export interface RobotsCrawlDelayCacheOptions {
    /** Defaults to {@link fetchRobotsTxtWithGotScraping}. */
    fetcher?: RobotsFetcher;
    /** Declared delays above this are capped (verdict gets `capped: true`). Default 60. */
    maxCrawlDelaySecs?: number;
    /** How long a settled verdict is reused. Default 24 h. */
    ttlMs?: number;
    /** Passed to the fetcher. Default 10 s. */
    timeoutMs?: number;
    /** Clock in epoch ms. */
    now?: () => number;
    /** Most origin/user-agent entries kept; past it, expired ones go first, then the least recently used. Default 1,000. */
    maxEntries?: number;
}

/** Per-call options of {@link RobotsCrawlDelayCache.get}. */
export interface RobotsLookupOptions {
    userAgent?: string;
    proxyUrl?: string;
}

/**
 * RFC 9309 §2.4: crawlers SHOULD NOT use a cached robots.txt for more than 24 hours. How long a read
 * is kept, and how often the origin gate reads it again; not an option, and not the length of the
 * block after an unreachable robots.txt (`robotsUnreachableDisallowSecs`), which only shares its
 * default.
 */
export const ROBOTS_TXT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/**
 * Default number of robots.txt verdicts kept. The origin gate asks once per origin per 24 h, so a
 * verdict evicted early costs at most one more fetch; without a cap a broad crawl kept every origin
 * it ever met for the life of the process.
 */
export const DEFAULT_ROBOTS_CACHE_MAX_ENTRIES = 1_000;
/** Default time budget for fetching one robots.txt. */
export const DEFAULT_ROBOTS_TIMEOUT_MS = 10_000;
/** RFC 9309 §2.5: crawlers MUST parse at least 500 KiB; we parse exactly that much. */
export const ROBOTS_TXT_MAX_BYTES = 500 * 1024;

/** The subset of robots-parser's result we rely on (its shipped typings do not resolve). */
interface ParsedRobotsTxt {
    getCrawlDelay(ua?: string): number | undefined;
    isAllowed(url: string, ua?: string): boolean | undefined;
}

type RobotsParser = (url: string, contents: string) => ParsedRobotsTxt;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const robotsParser: RobotsParser = require('robots-parser');

type GotScrapingModule = typeof import('got-scraping', { with: { 'resolution-mode': 'import' } });

let gotScrapingModule: Promise<GotScrapingModule> | undefined;

/**
 * Loads the ESM-only got-scraping. With `module: node16` TypeScript keeps `import()` as it is in the
 * CommonJS build, so Node (and jest with --experimental-vm-modules) load it as an ES module.
 */
export function loadGotScraping(): Promise<GotScrapingModule> {
    gotScrapingModule ??= import('got-scraping').catch((error: unknown) => {
        // Do not pin a failed load forever; the next fetch may succeed.
        gotScrapingModule = undefined;
        throw error;
    });
    return gotScrapingModule;
}

/**
 * Default {@link RobotsFetcher}: GET via got-scraping, following up to 5 redirects (RFC 9309 §2.3.1.2),
 * never throwing on HTTP status, never retrying (a 429 must reach the caller, not be retried blindly).
 * The body is streamed and the download stops at {@link ROBOTS_TXT_MAX_BYTES} of decompressed bytes or
 * at `timeoutMs` for the whole exchange, keeping what arrived (see {@link fetchWithBoundedBody}).
 */
export const fetchRobotsTxtWithGotScraping: RobotsFetcher = async (robotsUrl, { userAgent, proxyUrl, timeoutMs }) => {
    const { gotScraping } = await loadGotScraping();
    return fetchWithBoundedBody(
        (signal) =>
            responseOfGotStream(
                gotScraping.stream({
                    url: robotsUrl,
                    method: 'GET',
                    proxyUrl,
                    headers: userAgent === undefined ? {} : { 'user-agent': userAgent },
                    followRedirect: true,
                    maxRedirects: 5,
                    throwHttpErrors: false,
                    // got-scraping's current default too, but pinned: a retried 429/5xx would hide what the server said.
                    retry: { limit: 0 },
                    signal,
                }),
            ),
        { maxBytes: ROBOTS_TXT_MAX_BYTES, timeoutMs },
    );
};

/** Resolves when a got request stream has its (final, post-redirect) response headers. */
function responseOfGotStream(stream: Readable): Promise<OpenedResponse> {
    return new Promise((resolve, reject) => {
        // Stays attached: an error between this and the body reader taking over must not go unheard.
        stream.on('error', reject);
        stream.once('response', (response: { statusCode: number; headers: OpenedResponse['headers'] }) =>
            resolve({ statusCode: response.statusCode, headers: response.headers, stream }),
        );
    });
}

function headerValue(headers: RobotsFetchResult['headers'], name: string): string | string[] | undefined {
    // Custom fetchers may not lower-case header names the way Node does.
    for (const [key, value] of Object.entries(headers)) {
        if (key.toLowerCase() === name) return value;
    }
    return undefined;
}

/** Converts seconds to ms without float noise (1.1 s → 1100, not 1100.0000000000002) and without rounding to 0. */
function secsToMs(secs: number): number {
    return Number((secs * 1000).toPrecision(12));
}

/**
 * Classifies one robots.txt response. Exported so callers with their own fetch pipeline can reuse the rules.
 * @param robotsUrl absolute robots.txt URL (robots-parser needs it to build its rule set)
 */
export function robotsVerdictFromResponse(
    result: RobotsFetchResult,
    robotsUrl: string,
    options: { userAgent?: string; maxCrawlDelaySecs?: number } = {},
): RobotsVerdict {
    const maxCrawlDelaySecs = options.maxCrawlDelaySecs ?? DEFAULTS.maxCrawlDelaySecs;
    const { status } = result;

    if (status === 429) {
        const retryAfterHeader = headerValue(result.headers, 'retry-after');
        return retryAfterHeader === undefined ? { kind: 'rateLimited' } : { kind: 'rateLimited', retryAfterHeader };
    }
    if (status >= 500 && status <= 599) {
        const retryAfterHeader = headerValue(result.headers, 'retry-after');
        return {
            kind: 'none',
            reason: 'server-error',
            status,
            ...(retryAfterHeader === undefined ? {} : { retryAfterHeader }),
        };
    }
    if (status === 404 || status === 410) return { kind: 'none', reason: 'missing' };
    if (status >= 400 && status <= 499) return { kind: 'none', reason: 'client-error' };
    // A 3xx that reached us means the redirect chain was not resolved; RFC 9309 §2.3.1.2 treats that as unavailable.
    if (status >= 300 && status <= 399) return { kind: 'none', reason: 'missing' };
    // NaN and fractions (from a custom fetcher) pass none of the range checks above, so they must be named.
    if (!Number.isInteger(status) || status < 200 || status > 599) return { kind: 'none', reason: 'unreachable' };

    // robots-parser picks the most specific matching group and falls back to `*` groups itself.
    const declaredSecs = robotsParser(robotsUrl, result.body).getCrawlDelay(options.userAgent);
    // `!(x > 0)` also rejects NaN and undefined.
    if (declaredSecs === undefined || !(declaredSecs > 0)) return { kind: 'none', reason: 'no-crawl-delay' };
    if (declaredSecs > maxCrawlDelaySecs) {
        return { kind: 'crawlDelay', delayMs: secsToMs(maxCrawlDelaySecs), capped: true, declaredSecs };
    }
    return { kind: 'crawlDelay', delayMs: secsToMs(declaredSecs), capped: false, declaredSecs };
}

interface CacheEntry {
    /** Set while a fetch is running; every caller for this key awaits the same promise. */
    inFlight?: Promise<RobotsVerdict>;
    verdict?: RobotsVerdict;
    expiresAt: number;
    /** The verdict of the last read that got the file (or a 4xx), kept across failed reads and re-reads. */
    lastGood?: RobotsVerdict;
}

/**
 * Caches robots.txt crawl-delay verdicts per origin and user agent, fetching each at most once at a time.
 * Fetch failures never reject `get()`: they become `{ kind: 'none', reason: 'unreachable' }`. A failed
 * read (see {@link robotsReadFailure}) is not cached, so the next `get()` reads again.
 */
export class RobotsCrawlDelayCache {
    private readonly fetcher: RobotsFetcher;
    private readonly maxCrawlDelaySecs: number;
    private readonly ttlMs: number;
    private readonly timeoutMs: number;
    private readonly now: () => number;
    private readonly maxEntries: number;
    // In order of last use (a hit moves its entry to the end), so the first is the least recently used.
    private readonly entries = new Map<string, CacheEntry>();

    constructor(options: RobotsCrawlDelayCacheOptions = {}) {
        this.fetcher = options.fetcher ?? fetchRobotsTxtWithGotScraping;
        this.maxCrawlDelaySecs = options.maxCrawlDelaySecs ?? DEFAULTS.maxCrawlDelaySecs;
        this.ttlMs = options.ttlMs ?? ROBOTS_TXT_MAX_AGE_MS;
        this.timeoutMs = options.timeoutMs ?? DEFAULT_ROBOTS_TIMEOUT_MS;
        this.now = options.now ?? Date.now;
        this.maxEntries = options.maxEntries ?? DEFAULT_ROBOTS_CACHE_MAX_ENTRIES;
        if (!(this.maxCrawlDelaySecs > 0)) throw new RangeError('maxCrawlDelaySecs must be a positive number');
        if (!(this.ttlMs >= 0)) throw new RangeError('ttlMs must be a non-negative number');
        if (!(this.timeoutMs > 0)) throw new RangeError('timeoutMs must be a positive number');
        if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) {
            throw new RangeError(`maxEntries must be a positive integer, got ${this.maxEntries}`);
        }
    }

    /**
     * Crawl-delay verdict for the origin of `url`, from cache or fetched from `<origin>/robots.txt`.
     * Rejects only if `url` is not an absolute http(s) URL.
     */
    async get(url: string, options: RobotsLookupOptions = {}): Promise<RobotsVerdict> {
        const origin = originOf(url);
        const key = cacheKey(origin, options.userAgent);
        const existing = this.entries.get(key);
        if (existing?.inFlight) return existing.inFlight;
        if (existing?.verdict && this.now() < existing.expiresAt) {
            this.entries.delete(key);
            this.entries.set(key, existing);
            return existing.verdict;
        }

        const entry: CacheEntry = { expiresAt: 0, lastGood: existing?.lastGood };
        entry.inFlight = this.load(`${origin}/robots.txt`, options).then(
            (verdict) => {
                // Writes go to this entry object only, so after clear() they land on an orphan and are dropped.
                entry.verdict = verdict;
                // A failed read (a 429, a 5xx, no answer) is read again when asked: caching it would
                // shadow the real file for 24 h, and the caller retries it after a pause.
                const failed = robotsReadFailure(verdict) !== undefined;
                entry.expiresAt = failed ? this.now() : this.now() + this.ttlMs;
                if (!failed) entry.lastGood = verdict;
                entry.inFlight = undefined;
                return verdict;
            },
            (error: unknown) => {
                // Only a bug can land here (fetch failures are verdicts); never leave a rejected promise cached.
                if (this.entries.get(key) === entry) this.entries.delete(key);
                throw error;
            },
        );
        this.entries.delete(key);
        this.entries.set(key, entry);
        this.evict();
        return entry.inFlight;
    }

    /** Cached, unexpired verdict for the origin of `url`, or undefined (also while a fetch is in flight). */
    peek(url: string, userAgent?: string): RobotsVerdict | undefined {
        const entry = this.entries.get(cacheKey(originOf(url), userAgent));
        if (!entry?.verdict || entry.inFlight || this.now() >= entry.expiresAt) return undefined;
        return entry.verdict;
    }

    /**
     * The verdict of the last read of the origin of `url` that got its file (or a 4xx), however old:
     * what RFC 9309 §2.4 lets a crawler keep using while a re-read finds robots.txt unreachable.
     */
    lastGood(url: string, userAgent?: string): RobotsVerdict | undefined {
        return this.entries.get(cacheKey(originOf(url), userAgent))?.lastGood;
    }

    /** Number of origin/user-agent keys with an unexpired verdict or a fetch in flight. */
    get size(): number {
        const now = this.now();
        let count = 0;
        for (const entry of this.entries.values()) {
            if (entry.inFlight || now < entry.expiresAt) count++;
        }
        return count;
    }

    /** Entries held, expired ones included (what the memory holds). */
    get storedCount(): number {
        return this.entries.size;
    }

    /**
     * Keeps at most `maxEntries`: expired verdicts go first, then the least recently used. A fetch in
     * flight stays, since its callers share it.
     */
    private evict(): void {
        if (this.entries.size <= this.maxEntries) return;
        const now = this.now();
        for (const [key, entry] of this.entries) {
            if (!entry.inFlight && now >= entry.expiresAt) this.entries.delete(key);
        }
        for (const [key, entry] of this.entries) {
            if (this.entries.size <= this.maxEntries) return;
            if (!entry.inFlight) this.entries.delete(key);
        }
    }

    /** Forgets everything. Fetches already in flight still resolve for their callers but are not cached. */
    clear(): void {
        this.entries.clear();
    }

    private async load(robotsUrl: string, options: RobotsLookupOptions): Promise<RobotsVerdict> {
        let result: RobotsFetchResult;
        try {
            result = await this.fetcher(robotsUrl, {
                userAgent: options.userAgent,
                proxyUrl: options.proxyUrl,
                timeoutMs: this.timeoutMs,
            });
        } catch {
            return { kind: 'none', reason: 'unreachable' };
        }
        return robotsVerdictFromResponse(result, robotsUrl, {
            userAgent: options.userAgent,
            maxCrawlDelaySecs: this.maxCrawlDelaySecs,
        });
    }
}

function originOf(url: string): string {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        // Re-thrown so the message names the offending input (Node's says only "Invalid URL").
        throw new TypeError(`Invalid absolute URL for robots.txt lookup: ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw new TypeError(`robots.txt applies to http(s) URLs only, got ${parsed.protocol}`);
    }
    return parsed.origin;
}

function cacheKey(origin: string, userAgent: string | undefined): string {
    // Newline cannot occur in an origin, so keys cannot collide.
    return `${origin}\n${userAgent ?? ''}`;
}
