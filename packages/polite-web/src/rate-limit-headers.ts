import type { RateLimitHeaderStyle } from './site-options';

/** A token bucket's state at the moment a response is written. */
export interface QuotaState {
    /** Bucket capacity. */
    limit: number;
    /** Whole tokens left after this request. */
    remaining: number;
    /** Milliseconds until the bucket is full again. */
    resetMs: number;
    /** Seconds it takes an empty bucket to fill: the quota window. */
    windowSeconds: number;
    /** Current time, epoch ms. */
    now: number;
}

/** Headers advertising the quota in the requested style (empty for `none`). */
export function rateLimitHeaders(style: RateLimitHeaderStyle, quota: QuotaState): Record<string, string> {
    const resetSeconds = Math.ceil(quota.resetMs / 1000);
    switch (style) {
        case 'none':
            return {};
        case 'ietf':
            return {
                'RateLimit-Policy': `"default";q=${quota.limit};w=${quota.windowSeconds}`,
                RateLimit: `"default";r=${quota.remaining};t=${resetSeconds}`,
            };
        case 'legacy':
            return {
                'RateLimit-Limit': String(quota.limit),
                'RateLimit-Remaining': String(quota.remaining),
                'RateLimit-Reset': String(resetSeconds),
            };
        case 'x-ratelimit':
            return {
                'X-RateLimit-Limit': String(quota.limit),
                'X-RateLimit-Remaining': String(quota.remaining),
                'X-RateLimit-Reset': String(Math.ceil((quota.now + quota.resetMs) / 1000)),
            };
    }
}
