export { ThrottlingRequestManager } from './throttling-request-manager';
export type {
    ThrottlingRequestManagerOptions,
    ResolvedThrottlingOptions,
    RequestManagerOpener,
    InnerRequestManager,
} from './options';
export { throttlingOptionsSchema } from './options';
export type { PacingSignal } from './pacing-signal';
export type { Readiness, DomainSnapshot } from './readiness';
export type { Clock } from './clock';
export { systemClock, ManualClock } from './clock';
export { DomainState } from './domain-state';
export type { DomainStateData, BackoffPolicy, RateLimitOutcome } from './domain-state';
export type { DomainStateStore } from './domain-state-store';
export type { SharedDomainClock, SharedReservation, SharedClocks } from './shared-domain-clock';
export { decideReservation, decideSettlement } from './shared-domain-clock';
export { FileDomainClock } from './file-domain-clock';
export type { FileDomainClockOptions } from './file-domain-clock';
export { InMemoryDomainStateStore } from './domain-state-store';
export type { ThrottleBy } from './domain-key';
export { normalizeHostname, domainKeyOfUrl, domainKeyOfConfigured, InvalidDomainError } from './domain-key';
export { throttledQueueName, domainKeyFromQueueName, isThrottledQueueName } from './queue-name';
export {
    ThrottlingError,
    ThrottlingOptionsError,
    ThrottledDomainLimitError,
    PersistentRateLimitError,
    RequestThrottledError,
} from './errors';
export type { StalledDomain } from './errors';
export { parseRetryAfter } from './retry-after';
export type { AttachableCrawler, NavigationContext } from './crawler-integration';
export type { DomainGate, DomainGateOptions, DomainGateOutcome } from './throttling-request-manager';
export { parseRateLimitHeaders } from './rate-limit-headers';
export type { RateLimitInfo, RateLimitSource } from './rate-limit-headers';
export { RobotsCrawlDelayCache, fetchRobotsTxtWithGotScraping } from './robots-crawl-delay';
export type { RobotsFetcher, RobotsFetchResult, RobotsVerdict } from './robots-crawl-delay';
export type { ResponseLike, ResponseInfo } from './response-info';
export { ThrottledRetriesExhaustedError } from './errors';
export type { ScopeSettings, ResolvedPolicy } from './policy';
export { seededRandom, DEFAULT_BACKOFF_STATUS_CODES } from './policy';
export type { IntervalReason } from './domain-state';
export type { RampupSettings } from './policy';
export type { GetScopes, ScopesDeclaration, RequestScopes } from './request-scopes';
