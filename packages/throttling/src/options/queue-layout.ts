/**
 * How the manager stores requests.
 *
 * - `'perDomain'`: one `throttled-<domain>` queue per throttling key (the default; crawls of up to a
 *   few hundred domains).
 * - `'shared'`: every request stays in `inner`; a bounded window of them waits in memory, one line per
 *   key, and only a key with more waiting requests than its share of the window gets a queue of its
 *   own (broad crawls of thousands of domains). See docs/broad-crawls.md.
 */
export type QueueLayout = 'perDomain' | 'shared';

export const QUEUE_LAYOUTS = ['perDomain', 'shared'] as const satisfies readonly QueueLayout[];

/** Requests the shared layout's window holds at most (`frontierWindow`). */
export const DEFAULT_FRONTIER_WINDOW = 1_000;

/** Requests of one key the shared layout's window holds at most (`frontierWindowPerDomain`). */
export const DEFAULT_FRONTIER_WINDOW_PER_DOMAIN = 10;

/** `maxThrottledDomains` per layout: a hard limit for `'perDomain'`, the bound of kept state for `'shared'`. */
export const DEFAULT_MAX_THROTTLED_DOMAINS: Readonly<Record<QueueLayout, number>> = {
    perDomain: 100,
    shared: 10_000,
};
