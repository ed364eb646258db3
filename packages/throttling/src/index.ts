export { ThrottlingRequestManager } from './throttling-request-manager';
export type {
    ThrottlingRequestManagerOptions,
    ResolvedThrottlingOptions,
    RequestManagerOpener,
    InnerRequestManager,
    LearnedRatesSettings,
} from './options/options';
export type { IpResolver, ResolvedAddresses } from './ip/ip-resolver';
export { createSystemIpResolver } from './ip/ip-resolver';
export { throttlingOptionsSchema } from './options/options-schema';
export type { QueueLayout } from './options/queue-layout';
export type { PacingSignal, PacingScope, UrlLessPacingSignal } from './integration/scoped-signal';
export type { Readiness, ReadinessStatus, DomainSnapshot } from './readiness/readiness';
export type { DomainStatistics } from './readiness/statistics';
export type { Clock } from './core/clock';
export { systemClock, ManualClock } from './core/clock';
export { DomainState } from './pacing/domain-state';
export type { DomainStateData, BackoffPolicy, RateLimitOutcome } from './pacing/domain-state';
export type { DomainStateStore } from './pacing/domain-state-store';
export type { SharedDomainClock, SharedReservation, SharedClocks, MaybePromise } from './core/shared-domain-clock';
export { decideReservation, decideSettlement } from './core/shared-domain-clock';
export { FileDomainClock } from './shared-clock/file-domain-clock';
export type { FileDomainClockOptions } from './shared-clock/file-domain-clock';
// RedisDomainClock and RedisStorageClient need ioredis: they live in `crawlee-throttling/redis`.
export type {
    RefusalPolicy,
    SharedRefusal,
    SlotLease,
    QuotaSpend,
    SharedRate,
    SharedTally,
    TallyCounts,
} from './core/shared-limit-types';
export { InMemoryDomainStateStore } from './pacing/domain-state-store';
export type { ThrottleBy } from './routing/domain-key';
export { normalizeHostname, domainKeyOfUrl, domainKeyOfConfigured } from './routing/domain-key';
export { throttledQueueName, domainKeyFromQueueName, isThrottledQueueName } from './queues/queue-name';
export {
    ThrottlingError,
    ThrottlingOptionsError,
    ThrottledDomainLimitError,
    PersistentRateLimitError,
    RequestThrottledError,
    DomainUnreachableError,
    CrawlDelayTooLongError,
    RobotsUnreachableError,
    RequestBlockedError,
    InvalidDomainError,
    SharedClockError,
    StorageCallTimeoutError,
} from './core/errors';
export type { StalledDomain } from './core/errors';
export { parseRetryAfter } from './response/retry-after';
export type { AttachableCrawler } from './integration/crawler-integration';
export type { NavigationContext } from './orchestration/response-interpreter';
export type {
    RefusalWhen,
    RefusalWhenFunction,
    RefusalWhenShorthand,
    RefusalVerdict,
    RefusalResponse,
    TextPattern,
} from './response/refusal-rule';
export type {
    DomainGate,
    DomainGateAttempt,
    DomainGateDisallow,
    DomainGateOptions,
    DomainGateOutcome,
} from './robots/origin-gate';
export { parseRateLimitHeaders } from './response/rate-limit-headers';
export type { RateLimitInfo, RateLimitSource } from './response/rate-limit-headers';
export { RobotsCrawlDelayCache, fetchRobotsTxtWithGotScraping } from './robots/robots-crawl-delay';
export type { RobotsFetcher, RobotsFetchResult, RobotsVerdict, RobotsReadFailure } from './robots/robots-crawl-delay';
export type { ResponseLike, ResponseInfo } from './response/response-info';
export { ThrottledRetriesExhaustedError, CrawleeShapeError } from './core/errors';
export type { ScopeSettings, ResolvedPolicy } from './pacing/policy';
export { seededRandom, DEFAULT_BACKOFF_STATUS_CODES } from './pacing/policy';
export type { IntervalReason } from './pacing/domain-state';
export type { RampupSettings } from './pacing/policy';
export type { GetScopes, ScopesDeclaration, RequestScopes } from './options/request-scopes';
export type { ThrottlingEvents, ThrottlingListener, BackoffReason } from './core/throttling-events';
