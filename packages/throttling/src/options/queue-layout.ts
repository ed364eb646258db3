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
