import { DEFAULT_MAX_CRAWL_DELAY_SECS, DEFAULT_ROBOTS_TTL_MS } from '../robots/robots-crawl-delay';
import {
    DEFAULT_FRONTIER_WINDOW,
    DEFAULT_FRONTIER_WINDOW_PER_DOMAIN,
    DEFAULT_MAX_THROTTLED_DOMAINS,
} from './queue-layout';
import { systemClock } from '../core/clock';
import type { ThrottleBy } from '../routing/domain-key';
import { createSystemIpResolver } from '../ip/ip-resolver';
import { isIpScope } from '../ip/ip-address';
import { resolveLearnedRates } from './learned-rates-settings';
import { ThrottlingOptionsError } from '../core/errors';
import type { QueueLayout } from './queue-layout';
import { refusalRuleOf } from '../response/refusal-rule';
import type { ResolvedPolicy, ScopeSettings } from '../pacing/policy';
import { DEFAULT_BACKOFF_STATUS_CODES, jitterRange, POLICY_DEFAULTS, resolveRampup } from '../pacing/policy';
import { formatOptionIssues, throttlingOptionsSchema } from './options-schema';
import type { ResolvedThrottlingOptions, ThrottlingRequestManagerOptions } from './options';
import { DEFAULT_PERSIST_STATE_KEY } from './options';
import { normalizeScope } from './request-scopes';

/**
 * Adaptive pacing beside a shared clock adds no slots unless told to (`rampup.maxConcurrency`): a key
 * held by another process's lease looks slot-bound from here, and a one-at-a-time key keeps its
 * interval counted from the response across processes only while it stays one at a time.
 */
function sharedRampup(setting: ScopeSettings['rampup'], shared: boolean): ScopeSettings['rampup'] {
    const on = setting ?? POLICY_DEFAULTS.rampup;
    if (!shared || on === false) return setting;
    const settings = on === true ? {} : on;
    if (settings.maxConcurrency !== undefined) return setting;
    return { ...settings, maxConcurrency: 1 };
}

/** Validates user options and applies every default, in this one place. */
/**
 * Validates `options` and applies the defaults. `storage.sharedAcrossProcesses`: the crawl's storage
 * is shared live by several processes (RedisStorageClient), which changes the default layout.
 */
export function resolveThrottlingOptions(
    options: ThrottlingRequestManagerOptions,
    storage: { sharedAcrossProcesses?: boolean } = {},
): ResolvedThrottlingOptions {
    const parsed = throttlingOptionsSchema.safeParse(options);
    if (!parsed.success) throw new ThrottlingOptionsError(formatOptionIssues('ThrottlingRequestManager', parsed.error));
    const o = parsed.data;
    const { baseDelaySecs, maxDelaySecs } = backoffBounds(o);
    const paceByIp = o.throttleBy === 'ip';
    checkIpOptions(o, paceByIp);
    const throttleBy = o.throttleBy === 'registrableDomain' ? 'registrableDomain' : 'hostname';
    const defaults: ScopeSettings = {
        ...o,
        backoffMinDelaySecs: baseDelaySecs,
        backoffMaxDelaySecs: maxDelaySecs,
        rampup: sharedRampup(o.rampup, o.sharedClock !== undefined),
    };
    const defaultPolicy = resolvePolicy(defaults, {});
    const ipSettings: ScopeSettings = { ...defaults, ...(o.ipScope ?? {}) };
    const { scopes, scopeSettings } = resolveScopes(o.scopes ?? {}, { defaults, ipSettings }, throttleBy);
    return {
        inner: o.inner,
        domains: o.domains,
        throttleBy,
        paceByIp,
        ipResolver: paceByIp ? (o.ipResolver ?? createSystemIpResolver()) : undefined,
        ipPolicy: resolvePolicy(ipSettings, {}),
        ipSettings,
        learnedRates: resolveLearnedRates(o.rememberLearnedRates),
        baseDelayMs: baseDelaySecs * 1000,
        maxDelayMs: maxDelaySecs * 1000,
        minCrawlDelayMs: (o.minCrawlDelaySecs ?? 0) * 1000,
        maxDomainStallMs: (o.maxDomainStallSecs ?? 900) * 1000,
        ...resolveLayout(o, storage.sharedAcrossProcesses === true),
        persistStateKey: o.persistStateKey ?? DEFAULT_PERSIST_STATE_KEY,
        requestManagerOpener: o.requestManagerOpener,
        clock: o.clock ?? systemClock,
        stateStore: o.stateStore,
        sharedClock: o.sharedClock,
        onSharedClockError: o.onSharedClockError ?? 'pause',
        maxConsecutiveErrors: o.maxConsecutiveErrors ?? 5,
        ...resolveRobots(o),
        sameDomainDelay: o.sameDomainDelay ?? 'fold',
        defaultPolicy,
        scopes,
        scopeSettings,
        defaultSettings: defaults,
        random: o.random ?? Math.random,
        maxFreeRetries: o.maxFreeRetries ?? 20,
        getScopes: o.getScopes,
        refusalWhen: o.refusalWhen && refusalRuleOf(o.refusalWhen),
    };
}

/** How robots.txt is read and what its `Crawl-delay` may do. */
function resolveRobots(o: ThrottlingRequestManagerOptions) {
    return {
        onExcessiveCrawlDelay: o.onExcessiveCrawlDelay ?? 'cap',
        respectCrawlDelay: o.respectCrawlDelay ?? true,
        maxCrawlDelaySecs: o.maxCrawlDelaySecs ?? DEFAULT_MAX_CRAWL_DELAY_SECS,
        robotsUserAgent: o.robotsUserAgent,
        robotsFetcher: o.robotsFetcher,
        maxRobotsRetries: o.maxRobotsRetries ?? 5,
        robotsUnreachableDisallowMs:
            o.robotsUnreachableDisallowSecs === undefined
                ? DEFAULT_ROBOTS_TTL_MS
                : o.robotsUnreachableDisallowSecs * 1000,
    };
}

/** What a scope's own settings fall back to: `ipScope` for an IP scope, the manager-wide ones for any other. */
export function baseSettingsOf(
    options: { defaultSettings: ScopeSettings; ipSettings: ScopeSettings },
    key: string,
): ScopeSettings {
    return isIpScope(key) ? options.ipSettings : options.defaultSettings;
}

/**
 * The queue layout and its bounds; window settings are refused where they would do nothing. A crawl
 * of every domain it meets gets `'shared'` unless told otherwise: it stays bounded however many
 * domains come, where `'perDomain'` stops at `maxThrottledDomains`. A list of domains is bounded by
 * the list, so it keeps one queue per domain. So does a storage shared by several processes: the
 * shared layout's window holds requests locked in one process's memory, where the others cannot
 * take them, while domain queues hand out a few at a time to every process.
 */
function resolveLayout(o: ThrottlingRequestManagerOptions, sharedStorage: boolean) {
    const queueLayout = o.queueLayout ?? defaultLayout(o.domains, sharedStorage);
    if (queueLayout !== 'shared') {
        const windowOption = (['frontierWindow', 'frontierWindowPerDomain'] as const).find((k) => o[k] !== undefined);
        if (windowOption) {
            throw new ThrottlingOptionsError(
                `Invalid ThrottlingRequestManager options: \`${windowOption}\` applies only to queueLayout: 'shared' (queueLayout is '${queueLayout}')`,
            );
        }
    }
    const frontierWindow = o.frontierWindow ?? DEFAULT_FRONTIER_WINDOW;
    const frontierWindowPerDomain =
        o.frontierWindowPerDomain ?? Math.min(DEFAULT_FRONTIER_WINDOW_PER_DOMAIN, frontierWindow);
    if (frontierWindowPerDomain > frontierWindow) {
        throw new ThrottlingOptionsError(
            `Invalid ThrottlingRequestManager options: \`frontierWindowPerDomain\` (${frontierWindowPerDomain}) must not exceed \`frontierWindow\` (${frontierWindow})`,
        );
    }
    const maxThrottledDomains = o.maxThrottledDomains ?? DEFAULT_MAX_THROTTLED_DOMAINS[queueLayout];
    return { queueLayout, frontierWindow, frontierWindowPerDomain, maxThrottledDomains };
}

/** The layout used when none is chosen (see {@link resolveLayout}). */
export function defaultLayout(domains: ThrottlingRequestManagerOptions['domains'], sharedStorage = false): QueueLayout {
    return domains === 'all' && !sharedStorage ? 'shared' : 'perDomain';
}

/** Every configured scope's policy and settings, by normalised key. */
function resolveScopes(
    raw: Record<string, ScopeSettings>,
    bases: { defaults: ScopeSettings; ipSettings: ScopeSettings },
    throttleBy: ThrottleBy,
) {
    const scopes = new Map<string, ResolvedPolicy>();
    const scopeSettings = new Map<string, ScopeSettings>();
    for (const [name, settings] of Object.entries(raw)) {
        const key = normalizeScope(name, throttleBy);
        scopeSettings.set(key, settings);
        const base = baseSettingsOf({ defaultSettings: bases.defaults, ipSettings: bases.ipSettings }, key);
        scopes.set(key, { ...resolvePolicy(base, settings), scopeKey: key });
    }
    return { scopes, scopeSettings };
}

/** `ipScope` and `ipResolver` mean nothing without `throttleBy: 'ip'`: say so rather than ignore them. */
function checkIpOptions(o: ThrottlingRequestManagerOptions, paceByIp: boolean): void {
    if (paceByIp) return;
    for (const name of ['ipScope', 'ipResolver'] as const) {
        if (o[name] === undefined) continue;
        throw new ThrottlingOptionsError(
            `Invalid ThrottlingRequestManager options: \`${name}\` applies only with throttleBy: 'ip' (throttleBy is ${JSON.stringify(o.throttleBy ?? 'hostname')})`,
        );
    }
}

/** The manager-wide backoff bounds (v4 names or ours), checked against each other and every scope's. */
function backoffBounds(o: ThrottlingRequestManagerOptions): { baseDelaySecs: number; maxDelaySecs: number } {
    const baseDelaySecs = o.backoffMinDelaySecs ?? o.baseDelaySecs ?? 2;
    const maxDelaySecs = o.backoffMaxDelaySecs ?? o.maxDelaySecs ?? 60;
    if (baseDelaySecs > maxDelaySecs) {
        const minSet = o.backoffMinDelaySecs !== undefined || o.baseDelaySecs !== undefined;
        const minName = o.backoffMinDelaySecs !== undefined ? 'backoffMinDelaySecs' : 'baseDelaySecs';
        const maxName = o.backoffMaxDelaySecs !== undefined ? 'backoffMaxDelaySecs' : 'maxDelaySecs';
        // Name the option the user set: only the maximum set means the maximum is what is wrong.
        throw new ThrottlingOptionsError(
            minSet
                ? `Invalid ThrottlingRequestManager options: \`${minName}\` (${baseDelaySecs}) must not exceed \`${maxName}\` (${maxDelaySecs})`
                : `Invalid ThrottlingRequestManager options: \`${maxName}\` (${maxDelaySecs}) must be at least ${minName} (the least backoff delay; its default is ${baseDelaySecs} s). Set ${maxName} to ${baseDelaySecs} or more, or lower ${minName} too`,
        );
    }
    const ipMin = o.ipScope?.backoffMinDelaySecs ?? baseDelaySecs;
    const ipMax = o.ipScope?.backoffMaxDelaySecs ?? maxDelaySecs;
    const scopes: [string, ScopeSettings][] = [...Object.entries(o.scopes ?? {})];
    if (o.ipScope) scopes.push(['ipScope', o.ipScope]);
    for (const [key, scope] of scopes) {
        const ip = isIpScope(key);
        const min = scope.backoffMinDelaySecs ?? (ip ? ipMin : baseDelaySecs);
        const max = scope.backoffMaxDelaySecs ?? (ip ? ipMax : maxDelaySecs);
        if (min > max) {
            throw new ThrottlingOptionsError(
                `Invalid ThrottlingRequestManager options: in scope \`${key}\`, backoffMinDelaySecs (${min}) must not exceed backoffMaxDelaySecs (${max})`,
            );
        }
    }
    return { baseDelaySecs, maxDelaySecs };
}

/** One scope's settings over the manager-wide defaults, in milliseconds. */
export function resolvePolicy(defaults: ScopeSettings, scope: ScopeSettings): ResolvedPolicy {
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
