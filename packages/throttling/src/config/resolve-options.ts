import { DEFAULTS } from '../options/defaults';
import { systemClock } from '../core/clock';
import type { ThrottleBy } from '../routing/domain-key';
import { createSystemIpResolver } from '../ip/ip-resolver';
import { isIpScope } from '../ip/ip-address';
import { resolveLearnedRates } from '../options/learned-rates-settings';
import { ThrottlingOptionsError } from '../core/errors';
import type { QueueLayout } from '../options/queue-layout';
import { refusalRuleOf } from '../response/refusal-rule';
import type { ScopeSettings } from '../options/scope-settings';
import type { ResolvedPolicy } from '../pacing/policy';
import { resolvePolicy } from '../pacing/policy';
import { formatOptionIssues, throttlingOptionsSchema } from '../options/options-schema';
import type { ThrottlingRequestManagerOptions } from '../options/options';
import type { ResolvedThrottlingOptions } from './resolved-options';
import { normalizeScope } from '../options/request-scopes';

/**
 * Adaptive pacing beside a shared clock adds no slots unless told to (`rampup.maxConcurrency`): a key
 * held by another process's lease looks slot-bound from here, and a one-at-a-time key keeps its
 * interval counted from the response across processes only while it stays one at a time.
 */
function sharedRampup(setting: ScopeSettings['rampup'], shared: boolean): ScopeSettings['rampup'] {
    const on = setting ?? DEFAULTS.rampup;
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
        baseDelaySecs,
        maxDelaySecs,
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
        minCrawlDelayMs: (o.minCrawlDelaySecs ?? DEFAULTS.minCrawlDelaySecs) * 1000,
        maxDomainStallMs: (o.maxDomainStallSecs ?? DEFAULTS.maxDomainStallSecs) * 1000,
        ...resolveLayout(o, storage.sharedAcrossProcesses === true),
        storageSharedLive: storage.sharedAcrossProcesses === true,
        persistStateKey: o.persistStateKey ?? DEFAULTS.persistStateKey,
        requestManagerOpener: o.requestManagerOpener,
        clock: o.clock ?? systemClock,
        sharedClock: o.sharedClock,
        onSharedClockError: o.onSharedClockError ?? DEFAULTS.onSharedClockError,
        maxConsecutiveErrors: o.maxConsecutiveErrors ?? DEFAULTS.maxConsecutiveErrors,
        ...resolveRobots(o),
        sameDomainDelay: o.sameDomainDelay ?? DEFAULTS.sameDomainDelay,
        defaultPolicy,
        scopes,
        scopeSettings,
        defaultSettings: defaults,
        random: o.random ?? Math.random,
        maxFreeRetries: o.maxFreeRetries ?? DEFAULTS.maxFreeRetries,
        getScopes: o.getScopes,
        refusalWhen: o.refusalWhen && refusalRuleOf(o.refusalWhen),
    };
}

/** How robots.txt is read and what its `Crawl-delay` may do. */
function resolveRobots(o: ThrottlingRequestManagerOptions) {
    return {
        onExcessiveCrawlDelay: o.onExcessiveCrawlDelay ?? DEFAULTS.onExcessiveCrawlDelay,
        respectCrawlDelay: o.respectCrawlDelay ?? DEFAULTS.respectCrawlDelay,
        maxCrawlDelaySecs: o.maxCrawlDelaySecs ?? DEFAULTS.maxCrawlDelaySecs,
        robotsUserAgent: o.robotsUserAgent,
        robotsFetcher: o.robotsFetcher,
        maxRobotsRetries: o.maxRobotsRetries ?? DEFAULTS.maxRobotsRetries,
        robotsUnreachableDisallowMs:
            o.robotsUnreachableDisallowSecs === undefined
                ? DEFAULTS.robotsUnreachableDisallowSecs * 1000
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
 * domains come, where `'perDomain'` stops at `maxThrottledDomains`. That holds on storage shared by
 * several processes too: each process's window holds one request per domain (the rest wait in the
 * domain's queue, open to every process), and a dead process's window comes back when its locks
 * expire. A list of domains is bounded by the list, so it keeps one queue per domain.
 */
function resolveLayout(o: ThrottlingRequestManagerOptions, sharedStorage: boolean) {
    const queueLayout = o.queueLayout ?? defaultLayout(o.domains);
    if (queueLayout !== 'shared') {
        const windowOption = (['frontierWindow', 'frontierWindowPerDomain'] as const).find((k) => o[k] !== undefined);
        if (windowOption) {
            throw new ThrottlingOptionsError(
                `Invalid ThrottlingRequestManager options: \`${windowOption}\` applies only to queueLayout: 'shared' (queueLayout is '${queueLayout}')`,
            );
        }
    }
    const frontierWindow = o.frontierWindow ?? DEFAULTS.frontierWindow;
    const frontierWindowPerDomain =
        o.frontierWindowPerDomain ??
        Math.min(DEFAULTS.frontierWindowPerDomain[sharedStorage ? 'sharedStorage' : 'local'], frontierWindow);
    if (frontierWindowPerDomain > frontierWindow) {
        throw new ThrottlingOptionsError(
            `Invalid ThrottlingRequestManager options: \`frontierWindowPerDomain\` (${frontierWindowPerDomain}) must not exceed \`frontierWindow\` (${frontierWindow})`,
        );
    }
    const maxThrottledDomains = o.maxThrottledDomains ?? DEFAULTS.maxThrottledDomains[queueLayout];
    return { queueLayout, frontierWindow, frontierWindowPerDomain, maxThrottledDomains };
}

/** The layout used when none is chosen (see {@link resolveLayout}). */
export function defaultLayout(domains: ThrottlingRequestManagerOptions['domains']): QueueLayout {
    return domains === 'all' ? 'shared' : 'perDomain';
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
            `Invalid ThrottlingRequestManager options: \`${name}\` applies only with throttleBy: 'ip' (throttleBy is ${JSON.stringify(o.throttleBy ?? DEFAULTS.throttleBy)})`,
        );
    }
}

/** The manager-wide backoff bounds, checked against each other and every scope's. */
function backoffBounds(o: ThrottlingRequestManagerOptions): { baseDelaySecs: number; maxDelaySecs: number } {
    const baseDelaySecs = o.baseDelaySecs ?? DEFAULTS.baseDelaySecs;
    const maxDelaySecs = o.maxDelaySecs ?? DEFAULTS.maxDelaySecs;
    if (baseDelaySecs > maxDelaySecs) {
        // Name the option the user set: only the maximum set means the maximum is what is wrong.
        throw new ThrottlingOptionsError(
            o.baseDelaySecs !== undefined
                ? `Invalid ThrottlingRequestManager options: \`baseDelaySecs\` (${baseDelaySecs}) must not exceed \`maxDelaySecs\` (${maxDelaySecs})`
                : `Invalid ThrottlingRequestManager options: \`maxDelaySecs\` (${maxDelaySecs}) must be at least baseDelaySecs (the least backoff delay; its default is ${baseDelaySecs} s). Set maxDelaySecs to ${baseDelaySecs} or more, or lower baseDelaySecs too`,
        );
    }
    const ipMin = o.ipScope?.baseDelaySecs ?? baseDelaySecs;
    const ipMax = o.ipScope?.maxDelaySecs ?? maxDelaySecs;
    const scopes: [string, ScopeSettings][] = [...Object.entries(o.scopes ?? {})];
    if (o.ipScope) scopes.push(['ipScope', o.ipScope]);
    for (const [key, scope] of scopes) {
        const ip = isIpScope(key);
        const min = scope.baseDelaySecs ?? (ip ? ipMin : baseDelaySecs);
        const max = scope.maxDelaySecs ?? (ip ? ipMax : maxDelaySecs);
        if (min > max) {
            throw new ThrottlingOptionsError(
                `Invalid ThrottlingRequestManager options: in scope \`${key}\`, baseDelaySecs (${min}) must not exceed maxDelaySecs (${max})`,
            );
        }
    }
    return { baseDelaySecs, maxDelaySecs };
}
