// The public API of crawlee-throttling. Everything else is internal and may change in any release.
// The Redis parts (RedisDomainClock, RedisStorageClient) need ioredis: `crawlee-throttling/redis`.

// ---- The manager ----
export { ThrottlingRequestManager } from './throttling-request-manager';
export type { AttachableCrawler } from './integration/crawler-integration';
export type { NavigationContext } from './orchestration/response-interpreter';

// ---- Options and the types they take ----
export type {
    ThrottlingRequestManagerOptions,
    ResolvedThrottlingOptions,
    RequestManagerOpener,
    InnerRequestManager,
    LearnedRatesSettings,
} from './options/options';
export type { ScopeSettings, RampupSettings } from './pacing/policy';
export type { QueueLayout } from './options/queue-layout';
export type { ThrottleBy } from './routing/domain-key';
export type { GetScopes, ScopesDeclaration, RequestScopes } from './options/request-scopes';
export type {
    RefusalWhen,
    RefusalWhenFunction,
    RefusalWhenShorthand,
    RefusalVerdict,
    RefusalResponse,
    TextPattern,
} from './response/refusal-rule';
export type { RobotsFetcher, RobotsFetchResult } from './robots/robots-crawl-delay';
export type { IpResolver, ResolvedAddresses } from './ip/ip-resolver';
export type { DomainStateStore } from './pacing/domain-state-store';
export { InMemoryDomainStateStore } from './pacing/domain-state-store';

// ---- What the manager answers and emits ----
export type { PacingSignal, UrlLessPacingSignal, PacingScope } from './orchestration/scoped-signal';
export type { Readiness, ReadinessOf, DomainSnapshot } from './readiness/readiness';
export type { IntervalReason } from './pacing/domain-state-types';
export type { DomainStatistics } from './readiness/statistics';
export type { ThrottlingEvents, ThrottlingListener, BackoffReason } from './core/throttling-events';

// ---- Errors ----
export {
    ThrottlingError,
    ThrottlingOptionsError,
    ThrottledDomainLimitError,
    ThrottledRetriesExhaustedError,
    PersistentRateLimitError,
    RequestThrottledError,
    RequestBlockedError,
    DomainUnreachableError,
    CrawlDelayTooLongError,
    RobotsUnreachableError,
    InvalidDomainError,
    SharedClockError,
    StorageCallTimeoutError,
    CrawleeShapeError,
} from './core/errors';
export type { StalledDomain } from './core/errors';

// ---- Shared clocks (several processes on one machine; Redis: crawlee-throttling/redis) ----
export type { SharedDomainClock, SharedReservation, SharedClocks } from './core/shared-domain-clock';
// What a SharedDomainClock implementation takes and answers.
export type { MaybePromise } from './core/maybe-promise';
export type {
    RefusalPolicy,
    SharedRefusal,
    SlotLease,
    QuotaSpend,
    SharedRate,
    SharedTally,
    TallyCounts,
} from './core/shared-limit-types';
export { FileDomainClock } from './shared-clock/file-domain-clock';
export type { FileDomainClockOptions } from './shared-clock/file-domain-clock';

// ---- Helpers ----
export type { Clock } from './core/clock';
export { ManualClock, systemClock } from './core/clock';
export { seededRandom, DEFAULT_BACKOFF_STATUS_CODES } from './pacing/policy';
export { parseRetryAfter } from './response/retry-after';
export { parseRateLimitHeaders } from './response/rate-limit-headers';
export type { RateLimitInfo } from './response/rate-limit-headers';
export { normalizeHostname, domainKeyOfUrl } from './routing/domain-key';
