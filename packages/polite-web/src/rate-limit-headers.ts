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
    /** Requests counted in the window, refused ones included (`X-RateLimit-Used`). @default limit - remaining */
    used?: number;
}

// Base64 of a client key's hash, as express-rate-limit sends it; every client here is the same one.
const PARTITION_KEY = 'MTI3LjAuMC4x';

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
        case 'draft-8': {
            // express-rate-limit v8's `standardHeaders: 'draft-8'`: a policy named after its quota, a
            // partition key, and the reset in whole seconds rounded up.
            const name = `"${quota.limit}-in-${quota.windowSeconds}sec"`;
            return {
                'RateLimit-Policy': `${name}; q=${quota.limit}; w=${quota.windowSeconds}; pk=:${PARTITION_KEY}:`,
                RateLimit: `${name}; r=${quota.remaining}; t=${resetSeconds}`,
            };
        }
        case 'github':
            return {
                'X-RateLimit-Limit': String(quota.limit),
                'X-RateLimit-Remaining': String(quota.remaining),
                'X-RateLimit-Used': String(quota.used ?? quota.limit - quota.remaining),
                'X-RateLimit-Reset': String(Math.ceil((quota.now + quota.resetMs) / 1000)),
                'X-RateLimit-Resource': 'core',
            };
    }
}
