/**
 * Longest a domain's clocks may still run for one of its requests to wait in the frontier window.
 * Only requests that will go soon wait there, so a full window drains soon and holding back `inner`
 * meanwhile costs little; a longer wait (a backoff, a long crawl delay) is spent in the domain's own
 * queue instead, where it holds nothing else up.
 */
export const WINDOW_MAX_WAIT_MS = 5_000;

/**
 * Whether a domain that is not ready will be soon: its origin check (robots.txt) is running or due (`gated`),
 * its slots are busy (`readyAt` Infinity: a completion frees one), or its clocks run out within
 * {@link WINDOW_MAX_WAIT_MS}. Pure.
 */
export function waitsBriefly(gated: boolean, readyAt: number, now: number): boolean {
    return gated || readyAt === Number.POSITIVE_INFINITY || readyAt - now <= WINDOW_MAX_WAIT_MS;
}
