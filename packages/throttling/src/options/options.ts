import { DEFAULT_PERSIST_STATE_KEY } from '../queues/queue-namespace';
import { DEFAULT_MAX_CRAWL_DELAY_SECS } from '../robots/robots-crawl-delay';
import type { Configuration, IRequestManager } from '@crawlee/core';
import { z } from 'zod';

import type { Clock } from '../time/clock';
import { systemClock } from '../time/clock';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { SharedDomainClock } from '../shared-clock/shared-domain-clock';
import type { ThrottleBy } from '../routing/domain-key';
import { ThrottlingOptionsError } from '../errors';
import type { RobotsFetcher } from '../robots/robots-crawl-delay';
import type { ResolvedPolicy, ScopeSettings } from './policy';
import { DEFAULT_BACKOFF_STATUS_CODES, jitterRange, parseScopeKey, POLICY_DEFAULTS, resolveRampup } from './policy';
import { normalizeScope } from '../routing/request-scopes';
import type { GetScopes } from '../routing/request-scopes';

/** Opens the queue that holds one throttled domain's requests. */
export type RequestManagerOpener = (name: string, options: { config?: Configuration }) => Promise<IRequestManager>;

/** A request manager, or a factory called once on first use that returns one. */
export type InnerRequestManager = IRequestManager | (() => IRequestManager | Promise<IRequestManager>);

/**
 * Options of {@link ThrottlingRequestManager}. Option names follow Crawlee v4's manager; the policy
 * settings of {@link ScopeSettings} (concurrency, delays, jitter, backoff) set the defaults of every
 * throttled domain and can be overridden per domain or endpoint in `scopes`.
 */
export interface ThrottlingRequestManagerOptions extends Omit<ScopeSettings, 'backoffStatusCodes'> {
    /**
     * Holds the requests of domains that are not throttled (and anything that arrives without a
     * domain). A manager, or a factory called once on first use.
     * @default the default RequestQueue, opened on first use
     */
    inner?: InnerRequestManager;
    /**
     * Domains to throttle: a list of hostnames (`example.com`, `xn--bcher-kva.example`, `[::1]`),
     * or `'all'` to throttle every domain the crawl meets. Wildcards are not hostnames: use
     * `throttleBy: 'registrableDomain'` to group subdomains.
     */
    domains: readonly string[] | 'all';
    /**
     * What one throttled "domain" is: the URL's hostname, or its registrable domain (so
     * `a.example.com` and `b.example.com` share one clock). IPs and `localhost` stay per hostname.
     * @default 'hostname'
     */
    throttleBy?: ThrottleBy;
    /**
     * First backoff after a refusal without a usable `Retry-After`, multiplied by `backoffFactor`
     * on each further escalation.
     * @default 2
     */
    baseDelaySecs?: number;
    /**
     * Cap on any backoff and on `Retry-After`; applying it logs a warning naming the source.
     * @default 60
     */
    maxDelaySecs?: number;
    /**
     * Floor under every throttled domain's crawl delay: the least time between two dispatches to one
     * domain.
     * @default 0
     */
    minCrawlDelaySecs?: number;
    /**
     * A domain refusing every request for longer than this (idle time and crawl delays not counted),
     * with work still queued, ends the crawl with `PersistentRateLimitError`.
     * @default 900
     */
    maxDomainStallSecs?: number;
    /**
     * Most domains discovered under `domains: 'all'`. Going past it throws
     * `ThrottledDomainLimitError`; a batch that overflows still stores what fits.
     * @default 100
     */
    maxThrottledDomains?: number;
    /**
     * Key in the default key-value store under which discovered domains (and their clocks) are kept
     * for resuming. Give each manager sharing one storage its own key.
     * @default 'CRAWLEE_THROTTLED_DOMAINS'
     */
    persistStateKey?: string;
    /**
     * Opens the queue of each throttled domain, named `throttled-<domain>`.
     * @default RequestQueue.open
     */
    requestManagerOpener?: RequestManagerOpener;
    /**
     * Response status codes that mean "slow down": the domain backs off and the request is retried
     * later through the manager, without spending a retry or penalising the session.
     * @default [429, 502, 503, 504, 520, 521, 522, 523, 524]
     */
    backoffStatusCodes?: readonly number[];
    /**
     * Per-domain or per-endpoint overrides of the policy settings, keyed by hostname
     * (`'api.example.com'`) or hostname plus path prefix (`'api.example.com/search'`; such an endpoint
     * is paced apart from the rest of its host). A prefix covers whole segments (`/search` and
     * `/search/x`, not `/searchlight`) and matches every spelling of them: percent-encoded letters,
     * `;jsessionid=...` parameters, doubled slashes, dot segments and a trailing slash are normalised
     * away; case is significant.
     * @default {}
     */
    scopes?: Record<string, ScopeSettings>;
    /**
     * Random source in [0, 1) for jitter; pass `seededRandom(seed)` for reproducible runs.
     * @default Math.random
     */
    random?: () => number;
    /**
     * Decides the scopes of each request, replacing the default (the request's domain plus its
     * `userData.throttlingScopes`). The first scope returned holds the request's queue; a request is
     * dispatched only when every scope allows it. Return undefined to keep the default.
     */
    getScopes?: GetScopes;
    /**
     * Most free (throttled) retries of one request; past it, a refusal spends a normal retry, so a
     * single URL that always answers 503 cannot loop forever.
     * @default 20
     */
    maxFreeRetries?: number;
    /**
     * Read robots.txt `Crawl-delay` of each origin before the first request to it (and again once
     * the last read is 24 h old) and apply it as its domain's crawl delay.
     * @default true
     */
    respectCrawlDelay?: boolean;
    /**
     * Cap on a robots.txt `Crawl-delay`; applying it logs a warning.
     * @default 60
     */
    maxCrawlDelaySecs?: number;
    /**
     * User agent whose robots.txt group is read for `Crawl-delay`. Set it to the product token your
     * crawler announces; unset, the `*` group applies.
     */
    robotsUserAgent?: string;
    /**
     * Fetches robots.txt; the default uses got-scraping through the crawler's proxy.
     * @default got-scraping
     */
    robotsFetcher?: RobotsFetcher;
    /**
     * What `attach()` does with a crawler's own `sameDomainDelaySecs`: `'fold'` raises this manager's
     * floor to it and switches Crawlee's delay off (so requests are not paced twice); `'refuse'`
     * throws instead.
     * @default 'fold'
     */
    sameDomainDelay?: 'fold' | 'refuse';
    /**
     * Time source in epoch milliseconds; inject a manual clock in tests.
     * @default the system clock
     */
    clock?: Clock;
    /**
     * Where domain states live.
     * @default an in-memory store
     */
    stateStore?: DomainStateStore;
    /**
     * Clocks shared with other crawler processes (e.g. `new FileDomainClock(dir)`): every dispatch
     * reserves its window there too (a one-at-a-time domain holds it until the response), and backoffs
     * are published there, so several processes crawling the same sites keep each domain's interval
     * together. Concurrency, quotas and rampup stay per process.
     * @default undefined (pacing is per process)
     */
    sharedClock?: SharedDomainClock;
}

/** Options with every default applied: what the manager works with. */
export interface ResolvedThrottlingOptions {
    inner?: InnerRequestManager;
    domains: readonly string[] | 'all';
    throttleBy: ThrottleBy;
    baseDelayMs: number;
    maxDelayMs: number;
    minCrawlDelayMs: number;
    maxDomainStallMs: number;
    maxThrottledDomains: number;
    persistStateKey: string;
    requestManagerOpener?: RequestManagerOpener;
    clock: Clock;
    stateStore?: DomainStateStore;
    sharedClock?: SharedDomainClock;
    respectCrawlDelay: boolean;
    maxCrawlDelaySecs: number;
    robotsUserAgent?: string;
    robotsFetcher?: RobotsFetcher;
    sameDomainDelay: 'fold' | 'refuse';
    /** The policy of every throttled domain without a scope of its own. */
    defaultPolicy: ResolvedPolicy;
    /** Scope policies by normalised scope key (`host` or `host/path`). */
    scopes: ReadonlyMap<string, ResolvedPolicy>;
    random: () => number;
    maxFreeRetries: number;
    getScopes?: GetScopes;
}

const isFunction = (value: unknown): value is (...args: never[]) => unknown => typeof value === 'function';
const isRequestManagerLike = (value: unknown): boolean =>
    typeof value === 'object' &&
    value !== null &&
    isFunction((value as IRequestManager).fetchNextRequest) &&
    isFunction((value as IRequestManager).addRequest);

const seconds = (what: string) =>
    z
        .number({ error: `${what} must be a number of seconds` })
        .finite(`${what} must be finite`)
        .min(0, `${what} must be >= 0`);

const statusCodes = z
    .array(z.number().int().min(100).max(599), {
        error: 'backoffStatusCodes must be a list of HTTP status codes (100-599)',
    })
    .optional();

const jitter = z
    .union(
        [
            z.number().min(0, 'jitter must be >= 0').lt(1, 'jitter must be < 1 (0.5 means ×[0.5, 1.5])'),
            z
                .tuple([z.number().min(0), z.number().min(0)])
                .refine(([low, high]) => low <= high, 'jitter [low, high] needs 0 <= low <= high'),
        ],
        { error: 'jitter must be a number in [0, 1) or a [low, high] pair' },
    )
    .optional();

/** The policy settings shared by the options and each `scopes` entry. */
const policyShape = {
    concurrency: z
        .number({ error: 'concurrency must be a whole number >= 1' })
        .int('concurrency must be a whole number')
        .min(1, 'concurrency must be >= 1')
        .optional(),
    delaySecs: seconds('delaySecs').optional(),
    delayPerSlotSecs: seconds('delayPerSlotSecs').optional(),
    jitter,
    backoffStatusCodes: statusCodes,
    backoffOnNetworkErrors: z.boolean({ error: 'backoffOnNetworkErrors must be true or false' }).optional(),
    backoffFactor: z
        .number({ error: 'backoffFactor must be a number >= 1' })
        .min(1, 'backoffFactor must be >= 1')
        .finite()
        .optional(),
    backoffMinDelaySecs: seconds('backoffMinDelaySecs').optional(),
    backoffMaxDelaySecs: seconds('backoffMaxDelaySecs').optional(),
    backoffWindowSecs: seconds('backoffWindowSecs').optional(),
    ignoreRobotsCrawlDelay: z.boolean({ error: 'ignoreRobotsCrawlDelay must be true or false' }).optional(),
    rampup: z
        .union(
            [
                z.boolean(),
                z.strictObject({
                    algorithm: z
                        .enum(['adaptive', 'search'], { error: "rampup.algorithm must be 'adaptive' or 'search'" })
                        .optional(),
                    backoffTarget: z
                        .union([
                            z.number().min(0),
                            z
                                .tuple([z.number().min(0), z.number().min(0)])
                                .refine(([l, h]) => l <= h, 'backoffTarget [low, high] needs low <= high'),
                        ])
                        .optional(),
                    windowSecs: seconds('rampup.windowSecs').positive('rampup.windowSecs must be > 0').optional(),
                    initialRate: z.number().positive('rampup.initialRate must be > 0').optional(),
                    minRate: z.number().positive('rampup.minRate must be > 0').optional(),
                    maxRate: z.number().positive('rampup.maxRate must be > 0').optional(),
                    maxConcurrency: z.number().int().min(1, 'rampup.maxConcurrency must be >= 1').optional(),
                }),
            ],
            {
                error: 'rampup must be true/false or an object with algorithm, backoffTarget, windowSecs, initialRate, minRate, maxRate, maxConcurrency',
            },
        )
        .optional(),
    quota: z.number({ error: 'quota must be a positive number' }).positive('quota must be > 0').finite().optional(),
    windowSecs: seconds('windowSecs').positive('windowSecs must be > 0').optional(),
};

const scopeSchema = z.strictObject(policyShape);

/** Validates {@link ThrottlingRequestManagerOptions}; unknown options are errors. */
export const throttlingOptionsSchema = z.strictObject({
    ...policyShape,
    scopes: z
        .record(z.string(), scopeSchema, { error: 'scopes must map scope keys to settings objects' })
        .superRefine((scopes, ctx) => {
            // Keys that normalise alike ('a.com/x/', 'a.com/%78') would otherwise silently overwrite each other.
            const seen = new Map<string, string>();
            for (const key of Object.keys(scopes)) {
                try {
                    const normal = parseScopeKey(key).key;
                    const first = seen.get(normal);
                    if (first !== undefined)
                        throw new Error(
                            `scope keys ${JSON.stringify(first)} and ${JSON.stringify(key)} name the same scope ${normal}: keep one`,
                        );
                    seen.set(normal, key);
                } catch (error) {
                    ctx.addIssue({ code: 'custom', message: (error as Error).message, path: [key] });
                }
            }
        })
        .optional(),
    random: z
        .custom<() => number>(isFunction, { error: 'random must be a function returning a number in [0, 1)' })
        .optional(),
    maxFreeRetries: z.number().int().min(0, 'maxFreeRetries must be >= 0').optional(),
    getScopes: z.custom<GetScopes>(isFunction, { error: 'getScopes must be a function of the request' }).optional(),
    inner: z
        .custom<InnerRequestManager>((v) => isRequestManagerLike(v) || isFunction(v), {
            error: 'inner must be a request manager (with fetchNextRequest and addRequest) or a function returning one',
        })
        .optional(),
    domains: z.union(
        [z.literal('all'), z.array(z.string({ error: 'each entry of domains must be a hostname string' }))],
        {
            error: "domains is required: a list of hostnames, or 'all'",
        },
    ),
    throttleBy: z
        .enum(['hostname', 'registrableDomain'], { error: "throttleBy must be 'hostname' or 'registrableDomain'" })
        .optional(),
    baseDelaySecs: seconds('baseDelaySecs').optional(),
    maxDelaySecs: seconds('maxDelaySecs').optional(),
    minCrawlDelaySecs: seconds('minCrawlDelaySecs').optional(),
    maxDomainStallSecs: seconds('maxDomainStallSecs').optional(),
    maxThrottledDomains: z
        .number({ error: 'maxThrottledDomains must be a positive integer' })
        .int('maxThrottledDomains must be an integer')
        .positive('maxThrottledDomains must be >= 1')
        .optional(),
    persistStateKey: z.string().min(1, 'persistStateKey must be a non-empty string').optional(),
    requestManagerOpener: z
        .custom<RequestManagerOpener>(isFunction, { error: 'requestManagerOpener must be a function' })
        .optional(),
    respectCrawlDelay: z.boolean({ error: 'respectCrawlDelay must be true or false' }).optional(),
    maxCrawlDelaySecs: seconds('maxCrawlDelaySecs').positive('maxCrawlDelaySecs must be > 0').optional(),
    robotsUserAgent: z.string().min(1, 'robotsUserAgent must be a non-empty string').optional(),
    robotsFetcher: z.custom<RobotsFetcher>(isFunction, { error: 'robotsFetcher must be a function' }).optional(),
    sameDomainDelay: z.enum(['fold', 'refuse'], { error: "sameDomainDelay must be 'fold' or 'refuse'" }).optional(),
    clock: z
        .custom<Clock>((v) => typeof v === 'object' && v !== null && isFunction((v as Clock).now), {
            error: 'clock must be an object with a now() method returning epoch milliseconds',
        })
        .optional(),
    stateStore: z
        .custom<DomainStateStore>(
            (v) =>
                typeof v === 'object' &&
                v !== null &&
                ['read', 'update', 'list', 'clear'].every((m) => isFunction((v as never)[m])),
            { error: 'stateStore must implement read, update, list and clear' },
        )
        .optional(),
    sharedClock: z
        .custom<SharedDomainClock>(
            (v) =>
                typeof v === 'object' &&
                v !== null &&
                ['reserve', 'extend', 'settle'].every((m) => isFunction((v as never)[m])),
            {
                error: 'sharedClock must implement reserve(key, now, nextAt), extend(key, clocks) and settle(key, leasedUntil, nextAt), e.g. new FileDomainClock(dir)',
            },
        )
        .optional(),
});

/** Turns zod's issues into one message that names each bad option and what is allowed. */
export function formatOptionIssues(subject: string, error: z.ZodError): string {
    const lines = error.issues.map((issue) => {
        if (issue.code === 'unrecognized_keys') {
            return `unknown option(s) ${issue.keys.map((k) => `\`${k}\``).join(', ')}`;
        }
        const path = issue.path.length ? `\`${issue.path.join('.')}\`` : 'options';
        return `${path}: ${issue.message}`;
    });
    return `Invalid ${subject} options: ${lines.join('; ')}`;
}

/** Validates user options and applies every default, in this one place. */
export function resolveThrottlingOptions(options: ThrottlingRequestManagerOptions): ResolvedThrottlingOptions {
    const parsed = throttlingOptionsSchema.safeParse(options);
    if (!parsed.success) throw new ThrottlingOptionsError(formatOptionIssues('ThrottlingRequestManager', parsed.error));
    const o = parsed.data;
    const baseDelaySecs = o.backoffMinDelaySecs ?? o.baseDelaySecs ?? 2;
    const maxDelaySecs = o.backoffMaxDelaySecs ?? o.maxDelaySecs ?? 60;
    if (baseDelaySecs > maxDelaySecs) {
        const minName = o.backoffMinDelaySecs !== undefined ? 'backoffMinDelaySecs' : 'baseDelaySecs';
        const maxName = o.backoffMaxDelaySecs !== undefined ? 'backoffMaxDelaySecs' : 'maxDelaySecs';
        throw new ThrottlingOptionsError(
            `Invalid ThrottlingRequestManager options: \`${minName}\` (${baseDelaySecs}) must not exceed \`${maxName}\` (${maxDelaySecs})`,
        );
    }
    for (const [key, scope] of Object.entries(o.scopes ?? {})) {
        const min = scope.backoffMinDelaySecs ?? baseDelaySecs;
        const max = scope.backoffMaxDelaySecs ?? maxDelaySecs;
        if (min > max) {
            throw new ThrottlingOptionsError(
                `Invalid ThrottlingRequestManager options: in scope \`${key}\`, backoffMinDelaySecs (${min}) must not exceed backoffMaxDelaySecs (${max})`,
            );
        }
    }
    const throttleBy = o.throttleBy ?? 'hostname';
    const defaults: ScopeSettings = { ...o, backoffMinDelaySecs: baseDelaySecs, backoffMaxDelaySecs: maxDelaySecs };
    const defaultPolicy = resolvePolicy(defaults, {});
    const scopes = new Map<string, ResolvedPolicy>();
    for (const [raw, settings] of Object.entries(o.scopes ?? {})) {
        const key = normalizeScope(raw, throttleBy);
        scopes.set(key, { ...resolvePolicy(defaults, settings), scopeKey: key });
    }
    return {
        inner: o.inner,
        domains: o.domains,
        throttleBy,
        baseDelayMs: baseDelaySecs * 1000,
        maxDelayMs: maxDelaySecs * 1000,
        minCrawlDelayMs: (o.minCrawlDelaySecs ?? 0) * 1000,
        maxDomainStallMs: (o.maxDomainStallSecs ?? 900) * 1000,
        maxThrottledDomains: o.maxThrottledDomains ?? 100,
        persistStateKey: o.persistStateKey ?? DEFAULT_PERSIST_STATE_KEY,
        requestManagerOpener: o.requestManagerOpener,
        clock: o.clock ?? systemClock,
        stateStore: o.stateStore,
        sharedClock: o.sharedClock,
        respectCrawlDelay: o.respectCrawlDelay ?? true,
        maxCrawlDelaySecs: o.maxCrawlDelaySecs ?? DEFAULT_MAX_CRAWL_DELAY_SECS,
        robotsUserAgent: o.robotsUserAgent,
        robotsFetcher: o.robotsFetcher,
        sameDomainDelay: o.sameDomainDelay ?? 'fold',
        defaultPolicy,
        scopes,
        random: o.random ?? Math.random,
        maxFreeRetries: o.maxFreeRetries ?? 20,
        getScopes: o.getScopes,
    };
}

/** One scope's settings over the manager-wide defaults, in milliseconds. */
function resolvePolicy(defaults: ScopeSettings, scope: ScopeSettings): ResolvedPolicy {
    const pick = <K extends keyof ScopeSettings>(key: K) => scope[key] ?? defaults[key];
    return {
        concurrency: pick('concurrency') ?? POLICY_DEFAULTS.concurrency,
        delayMs: (pick('delaySecs') ?? POLICY_DEFAULTS.delaySecs) * 1000,
        delayPerSlotMs: (pick('delayPerSlotSecs') ?? POLICY_DEFAULTS.delayPerSlotSecs) * 1000,
        jitter: jitterRange(pick('jitter') ?? POLICY_DEFAULTS.jitter),
        backoffStatusCodes: new Set(pick('backoffStatusCodes') ?? DEFAULT_BACKOFF_STATUS_CODES),
        backoffOnNetworkErrors: pick('backoffOnNetworkErrors') ?? POLICY_DEFAULTS.backoffOnNetworkErrors,
        backoffFactor: pick('backoffFactor') ?? POLICY_DEFAULTS.backoffFactor,
        backoffMinDelayMs: (pick('backoffMinDelaySecs') ?? 2) * 1000,
        backoffMaxDelayMs: (pick('backoffMaxDelaySecs') ?? 60) * 1000,
        backoffWindowMs: (pick('backoffWindowSecs') ?? POLICY_DEFAULTS.backoffWindowSecs) * 1000,
        ignoreRobotsCrawlDelay: pick('ignoreRobotsCrawlDelay') ?? POLICY_DEFAULTS.ignoreRobotsCrawlDelay,
        rampup: resolveRampup(pick('rampup') ?? POLICY_DEFAULTS.rampup),
        quota:
            pick('quota') === undefined
                ? undefined
                : { limit: pick('quota')!, windowMs: (pick('windowSecs') ?? 60) * 1000 },
        explicit: { concurrency: scope.concurrency !== undefined, delay: scope.delaySecs !== undefined },
    };
}
