// The public API of crawlee-throttling. Everything else is internal and may change in any release.
// `crawlee-throttling/types` has the narrower types these signatures name (the parts of options and
// answers, and what a custom SharedDomainClock implements); `crawlee-throttling/redis` the parts that
// need ioredis (RedisDomainClock, RedisStorageClient).

// ---- The manager ----
export { ThrottlingRequestManager } from './throttling-request-manager';

// ---- Options, and the types of what the manager takes, answers and emits ----
export type { ThrottlingRequestManagerOptions } from './options/options';
export type { ResolvedThrottlingOptions } from './config/resolved-options';
export type { ScopeSettings, RampupSettings } from './options/scope-settings';
export type { QueueLayout } from './options/queue-layout';
export type { ThrottleBy } from './routing/domain-key';
export type { RefusalWhen } from './response/refusal-rule';
export type { PacingSignal } from './orchestration/scoped-signal';
export type { Readiness, DomainSnapshot } from './readiness/readiness';
export type { DomainStatistics } from './readiness/statistics';
export type { ThrottlingEvents } from './core/throttling-events';

// ---- Errors (every one extends ThrottlingError and has a stable `code`) ----
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
    InvalidArgumentError,
    SharedClockError,
    StorageCallTimeoutError,
    CrawleeShapeError,
} from './core/errors';

// ---- Shared clocks (several processes; Redis: crawlee-throttling/redis) ----
export type { SharedDomainClock } from './core/shared-domain-clock';
export { FileDomainClock } from './shared-clock/file-domain-clock';
export type { FileDomainClockOptions } from './shared-clock/file-domain-clock';

// ---- Helpers ----
export type { Clock } from './core/clock';
export { ManualClock, systemClock } from './core/clock';
export { seededRandom } from './pacing/policy';
export { DEFAULT_BACKOFF_STATUS_CODES } from './options/defaults';
export { parseRetryAfter } from './response/retry-after';
export { parseRateLimitHeaders } from './response/rate-limit-headers';
export type { RateLimitInfo } from './response/rate-limit-headers';
