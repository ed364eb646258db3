export { startPoliteWeb } from './polite-web';
export type { PoliteWeb, PoliteWebOptions } from './polite-web';
export { defaultSites } from './default-sites';
export type { SiteOverrides } from './default-sites';
export { resolveSite, normalizeHost } from './site-options';
export type {
    SiteOptions,
    ResolvedSite,
    RefusalOptions,
    RobotsOverride,
    RobotsFailures,
    RetryAfterStyle,
    RateLimitHeaderStyle,
    RateLimitSchedule,
    ConnectionResetOptions,
    WindowLimit,
    ServiceOptions,
    UpstreamOptions,
} from './site-options';
export type { WindowStart } from './fixed-window';
export { FixedWindow } from './fixed-window';
export { WorkerQueue } from './worker-queue';
export type { QueueAdmission } from './worker-queue';

export { TokenBucket } from './token-bucket';
export { retryAfterValue } from './retry-after';
export type { LogEntry } from './request-log';
export { isRobotsPath } from './request-log';
export { CLIENT_HEADER } from './request-target';
export { scoreLog } from './score-log';
export type { ScoreOptions, ScoredSite, SiteScore, ScoreTotals, WebScore } from './score-log';
export { formatScoreTable } from './format-score-table';
export { pageLinks } from './site-pages';
