import type { Clock } from '../core/clock';
import type { SharedDomainClock } from '../core/shared-domain-clock';
import type { IpResolver } from '../ip/ip-resolver';
import type { InnerRequestManager, RequestManagerOpener } from '../options/options-schema';
import type { GetScopes } from '../options/request-scopes';
import type { QueueLayout } from '../options/queue-layout';
import type { RobotsFetcher } from '../options/robots-fetcher';
import type { ScopeSettings } from '../options/scope-settings';
import type { ResolvedPolicy } from '../pacing/policy';
import type { RefusalRule } from '../response/refusal-rule';
import type { ThrottleBy } from '../routing/domain-key';

/** Options with every default applied: what the manager works with. */
export interface ResolvedThrottlingOptions {
    inner?: InnerRequestManager;
    domains: readonly string[] | 'all';
    /** How throttling keys are formed (`'hostname'` under `throttleBy: 'ip'`). */
    throttleBy: ThrottleBy;
    /** `throttleBy: 'ip'`: each request's address is a scope of its own beside its host's. */
    paceByIp: boolean;
    /** The resolver of `throttleBy: 'ip'` (the system one unless given); undefined without it. */
    ipResolver?: IpResolver;
    /** The policy of every IP scope without a `scopes` entry of its own. */
    ipPolicy: ResolvedPolicy;
    /** The settings every IP scope falls back to (`ipScope` over the manager-wide settings). */
    ipSettings: ScopeSettings;
    /** Where learned rates are kept; undefined when `rememberLearnedRates` is false. */
    learnedRates?: { storeName: string; maxAgeMs: number };
    baseDelayMs: number;
    maxDelayMs: number;
    minCrawlDelayMs: number;
    maxDomainStallMs: number;
    maxThrottledDomains: number;
    queueLayout: QueueLayout;
    /** The crawl's storage is shared live by several processes (see `storageSharedAcrossProcesses`). */
    storageSharedLive: boolean;
    frontierWindow: number;
    frontierWindowPerDomain: number;
    persistStateKey: string;
    requestManagerOpener?: RequestManagerOpener;
    clock: Clock;
    sharedClock?: SharedDomainClock;
    onSharedClockError: 'pause' | 'local';
    maxConsecutiveErrors: number;
    onExcessiveCrawlDelay: 'cap' | 'skip';
    respectCrawlDelay: boolean;
    maxCrawlDelaySecs: number;
    robotsUserAgent?: string;
    robotsFetcher?: RobotsFetcher;
    maxRobotsRetries: number;
    robotsUnreachableDisallowMs: number;
    sameDomainDelay: 'fold' | 'refuse';
    /** The policy of every throttled domain without a scope of its own. */
    defaultPolicy: ResolvedPolicy;
    /** Scope policies by normalised scope key (`host` or `host/path`). */
    scopes: ReadonlyMap<string, ResolvedPolicy>;
    /** The settings behind each scope policy, by normalised key (what `updateScope()` merges into). */
    scopeSettings: ReadonlyMap<string, ScopeSettings>;
    /** The manager-wide settings every scope falls back to. */
    defaultSettings: ScopeSettings;
    random: () => number;
    maxFreeRetries: number;
    getScopes?: GetScopes;
    /** `refusalWhen` as one function (the shorthand compiled), its answers checked. */
    refusalWhen?: RefusalRule;
}
