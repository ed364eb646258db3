import { isIpScope, parseIpScopeKey } from '../ip/ip-address';
import { normalizeHostname } from '../routing/domain-key';
import { normalizeScopePath } from '../routing/scope-path';
import type { RampupPolicy } from './rampup-policy';
import { RAMPUP_DEFAULTS } from './rampup-policy';

/** Resolves a `rampup` setting into the pace learner's policy. */
export function resolveRampup(setting: boolean | RampupSettings | undefined): RampupPolicy | undefined {
    if (!setting) return undefined;
    const s = setting === true ? {} : setting;
    return {
        ...RAMPUP_DEFAULTS,
        windowMs: s.windowSecs !== undefined ? s.windowSecs * 1000 : RAMPUP_DEFAULTS.windowMs,
        initialRate: s.initialRate ?? RAMPUP_DEFAULTS.initialRate,
        minRate: s.minRate ?? RAMPUP_DEFAULTS.minRate,
        maxRate: s.maxRate ?? RAMPUP_DEFAULTS.maxRate,
        maxConcurrency: s.maxConcurrency ?? RAMPUP_DEFAULTS.maxConcurrency,
    };
}

/**
 * Pacing settings of one scope (a domain, or an endpoint prefix such as `api.example.com/search`).
 * Every field falls back to the manager-wide option of the same name.
 */
export interface ScopeSettings {
    /**
     * Most requests of the scope in flight at once (handed out and not yet handled or reclaimed).
     * @default 1
     */
    concurrency?: number;
    /**
     * Least time between two dispatches to the scope.
     * @default 0
     */
    delaySecs?: number;
    /**
     * Least time between two dispatches of the same concurrency slot.
     * @default 0
     */
    delayPerSlotSecs?: number;
    /**
     * Randomises each delay: `0.5` multiplies it by a factor drawn from [0.5, 1.5]; `[low, high]`
     * draws from [low, high]. 0 turns it off.
     * @default 0
     */
    jitter?: number | readonly [number, number];
    /**
     * Response status codes that make the scope back off (and the request be retried for free).
     * @default [429, 502, 503, 504, 520, 521, 522, 523, 524]
     */
    backoffStatusCodes?: readonly number[];
    /**
     * Network errors and timeouts make the scope back off too.
     * @default true
     */
    backoffOnNetworkErrors?: boolean;
    /**
     * Growth of the backoff on each further trigger.
     * @default 2
     */
    backoffFactor?: number;
    /**
     * First backoff after a trigger without a usable server-given wait.
     * @default baseDelaySecs (2)
     */
    backoffMinDelaySecs?: number;
    /**
     * Cap on backoff, on server-given waits and on the raised pacing.
     * @default maxDelaySecs (60)
     */
    backoffMaxDelaySecs?: number;
    /**
     * After this long without a trigger, the raised pacing steps down one factor (and again after each
     * further quiet window) towards the configured pacing.
     * @default 60
     */
    backoffWindowSecs?: number;
    /**
     * Ignore robots.txt `Crawl-delay` for this scope (and do not warn when explicit settings win).
     * @default false
     */
    ignoreRobotsCrawlDelay?: boolean;
    /**
     * Adaptive pacing (see docs/rampup.md): learn the rate the scope accepts from its answers and pace
     * just under it, growing slots while slow answers rather than the pace hold it back. `false` opts
     * out: backoff alone, one request at a time unless `concurrency` says otherwise. The configured
     * `delaySecs` and robots.txt `Crawl-delay` stay floors under the rate found.
     * @default true
     */
    rampup?: boolean | RampupSettings;
    /**
     * Most cost the scope may spend per `windowSecs` (fixed windows). A request costs 1 unless its
     * `userData.throttlingScopes` map says otherwise; one request costing more than the quota still
     * goes alone into an empty window.
     */
    quota?: number;
    /**
     * Length of a quota window.
     * @default 60
     */
    windowSecs?: number;
}

/** Settings of the pace learner (docs/rampup.md). */
export interface RampupSettings {
    /**
     * The learning algorithm: `'adaptive'`, the only one (kept so that settings naming it stay valid).
     * @default 'adaptive'
     */
    algorithm?: 'adaptive';
    /**
     * Least length of a measuring window.
     * @default 1
     */
    windowSecs?: number;
    /**
     * Rate to start from, requests per second; unset: unpaced until the site gives a signal (a
     * refusal, an empty quota, a queue). A rate an earlier crawl learned (`rememberLearnedRates`) wins.
     */
    initialRate?: number;
    /** @default 0.01 */
    minRate?: number;
    /** @default 1000 */
    maxRate?: number;
    /**
     * Most concurrency the learner may reach by adding slots while response times stay flat
     * (never above an explicit `concurrency` of the scope). 8 is Scrapy's
     * `CONCURRENT_REQUESTS_PER_DOMAIN`: what a polite crawler has long been trusted to send one site.
     * @default 8
     */
    maxConcurrency?: number;
}

/** Settings of a scope with every default applied, in milliseconds. */
export interface ResolvedPolicy {
    concurrency: number;
    delayMs: number;
    delayPerSlotMs: number;
    jitter: readonly [number, number] | undefined;
    backoffStatusCodes: ReadonlySet<number>;
    backoffOnNetworkErrors: boolean;
    backoffFactor: number;
    backoffMinDelayMs: number;
    backoffMaxDelayMs: number;
    backoffWindowMs: number;
    ignoreRobotsCrawlDelay: boolean;
    /** The pace learner's settings; undefined when rampup is off. */
    rampup: RampupPolicy | undefined;
    /** Quota per window, or undefined for none. */
    quota: { limit: number; windowMs: number } | undefined;
    /** Which of concurrency/delay the user set explicitly for this scope (robots.txt then yields). */
    explicit: { concurrency: boolean; delay: boolean };
    /** The `scopes` key these settings came from; undefined for the defaults. */
    scopeKey?: string;
}

/** Default backoff triggers: rate limiting and the usual overload answers of servers and CDNs. */
export const DEFAULT_BACKOFF_STATUS_CODES: readonly number[] = [429, 502, 503, 504, 520, 521, 522, 523, 524];

/** The built-in defaults of the policy settings (manager options override them). */
export const POLICY_DEFAULTS = {
    concurrency: 1,
    delaySecs: 0,
    delayPerSlotSecs: 0,
    jitter: 0,
    backoffOnNetworkErrors: true,
    backoffFactor: 2,
    backoffWindowSecs: 60,
    ignoreRobotsCrawlDelay: false,
    rampup: true,
} as const;

/** Normalises a jitter setting into a [low, high] multiplier range, or undefined for none. */
export function jitterRange(
    jitter: number | readonly [number, number] | undefined,
): readonly [number, number] | undefined {
    if (jitter === undefined || jitter === 0) return undefined;
    if (typeof jitter === 'number') return [1 - jitter, 1 + jitter];
    return jitter[0] === 1 && jitter[1] === 1 ? undefined : jitter;
}

/** Applies a jitter range to a delay with a random number from [0, 1). */
export function applyJitter(ms: number, range: readonly [number, number] | undefined, random: () => number): number {
    if (!range || ms <= 0) return ms;
    const [low, high] = range;
    return ms * (low + (high - low) * random());
}

/**
 * A deterministic random source (mulberry32) for reproducible jitter in tests and benchmarks.
 * Returns numbers in [0, 1).
 */
export function seededRandom(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** A parsed `scopes` key: a hostname, optionally with a path prefix. */
export interface ScopeKey {
    /** The key as normalised: `host` or `host/path-prefix`. */
    key: string;
    host: string;
    /** Path prefix starting with `/`, or undefined for a whole host. */
    pathPrefix?: string;
}

/**
 * Parses a `scopes` key (`example.com`, `api.example.com/search`, `@budget`, `ip:203.0.113.7`). Throws a message naming the
 * key and the allowed forms when it is malformed.
 */
export function parseScopeKey(raw: string): ScopeKey {
    const allowed =
        "a hostname ('api.example.com'), a hostname with a path prefix ('api.example.com/search'), a named scope ('@budget') or an address ('ip:203.0.113.7')";
    if (typeof raw === 'string' && /^@[\w.:-]+$/.test(raw)) return { key: raw, host: raw };
    if (typeof raw === 'string' && isIpScope(raw)) {
        const key = parseIpScopeKey(raw);
        return { key, host: key };
    }
    if (typeof raw !== 'string' || raw.trim() !== raw || raw === '')
        throw new Error(`scope key ${JSON.stringify(raw)} is not valid: use ${allowed}`);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw))
        throw new Error(`scope key ${JSON.stringify(raw)} must not have a scheme: use ${allowed}`);
    const slash = raw.indexOf('/');
    const hostPart = slash === -1 ? raw : raw.slice(0, slash);
    const pathPrefix = slash === -1 ? undefined : scopePathPrefix(raw, raw.slice(slash), allowed);
    let host: string;
    try {
        host = normalizeHostname(hostPart);
    } catch (error) {
        throw new Error(`scope key ${JSON.stringify(raw)} is not valid: ${(error as Error).message}`);
    }
    return { key: pathPrefix ? `${host}${pathPrefix}` : host, host, pathPrefix };
}

/**
 * The path prefix of a scope key in the form crawled paths are matched in (see `normalizeScopePath`),
 * so `/%73earch/` and `/search` name one scope; undefined when it resolves to the root (the whole host).
 */
function scopePathPrefix(raw: string, prefix: string, allowed: string): string | undefined {
    // eslint-disable-next-line no-control-regex
    if (/[?#\s\u0000-\u001f\u007f]/.test(prefix))
        throw new Error(
            `scope key ${JSON.stringify(raw)} has a path prefix with a query ('?'), fragment ('#'), whitespace or control character: use ${allowed}`,
        );
    // Servers route `/x;v=1` as `/x`, and requests are matched without parameters: such a key could never
    // narrow the scope the user meant to narrow.
    if (/;/.test(prefix))
        throw new Error(
            `scope key ${JSON.stringify(raw)} has path parameters (';'), which are ignored when requests are matched: use ${allowed}`,
        );
    const normal = normalizeScopePath(prefix);
    return normal === '/' ? undefined : normal;
}
