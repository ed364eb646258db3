import type { RetryAfterStyle } from './site-options';

/**
 * Value of the `Retry-After` header for a wait of `waitMs` from `now`, or undefined for style `none`.
 * Seconds are rounded up with a minimum of 1 so a client that obeys exactly never arrives early
 * and never gets the ambiguous "0" (which many clients read as "retry immediately").
 */
export function retryAfterValue(style: RetryAfterStyle, waitMs: number, now: number): string | undefined {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    switch (style) {
        case 'none':
            return undefined;
        case 'seconds':
            return String(seconds);
        case 'http-date': {
            // HTTP-dates have whole-second resolution; round the moment up so it is never early.
            const at = Math.ceil((now + waitMs) / 1000) * 1000;
            return new Date(Math.max(at, now + 1000)).toUTCString();
        }
    }
}
