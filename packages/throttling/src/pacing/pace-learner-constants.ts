/**
 * The pace learner's named constants, each with its reason (docs/rampup.md lists them too). Rates
 * are requests per second, times ms.
 */
/**
 * The pace as a share of the rate measured: just under it, so that jitter and a clock's rounding do
 * not overrun the site (BBR's cruising gain). Also how full a window must be to count as held by the
 * pace, and how close to the refused pace the pace counts as there.
 */
export const PACE_GAIN = 0.95;
/**
 * A window median above this multiple of the least response time is a queue at the site. The goal is
 * a median within 1.5× of the site's unloaded one; Gradient2 uses the same tolerance.
 */
export const LATENCY_TOLERANCE = 1.5;
/**
 * Response times are judged against at least this (ms): below it, a median a few times the least one
 * is the crawler's own timing (its event loop, a loaded machine) as much as the site's. B5 judges the
 * response ratio against the same floor.
 */
export const JITTER_FLOOR_MS = 50;
/**
 * How long estimates hold before they are measured again: the least response time, the knee of the
 * slots, and the lowest refused pace (relaxed after it, so a site that got faster or a limit that
 * changed is found). Envoy's adaptive concurrency re-samples its minimum on about this scale.
 */
export const PERIOD_MS = 30_000;
/** How far from the pace towards the refused pace a quiet window steps, and how far a relaxed bound moves up. */
export const PROBE_STEP = 0.25;
/** A refused bound is relaxed only after this many requests too: one probe's refusal per 200 is ½ % at most. */
export const RELAX_DISPATCHES = 200;
/** Least answers in a window before its median says anything. */
export const MIN_WINDOW_ANSWERS = 3;
/**
 * A first refusal's named wait at least this long makes what got through over it the site's rate: a
 * whole-second `Retry-After` is rounded up by less than a second, at most half of such a wait. A
 * retry refused this long after the refusal before it rules out a bucket of 0.5 req/s or more: the
 * backoff skips the next retry, which a limiter that remembers would count too, and the probe that
 * ends such a lockout measures the rate (lockout.ts).
 */
export const MEASURING_WAIT_MS = 2_000;
/** What a refusal without a server-given wait is read as at the first refusal (as `Retry-After: 1`). */
export const BARE_REFUSAL_MS = 1_000;
/**
 * Fewer requests than this waiting in the scope: no probing above a refused pace. A short crawl's
 * refusals are few by the goal (at most 2 a site), and a probe's would be one of them; with more
 * left, a probe is sent only where it gains more time than its refusal costs (`RefusedBound.worthProbing`).
 */
export const MIN_BACKLOG_TO_PROBE = 15;
/**
 * A refused share that kept this much of itself after a cut did not fall because of it. The rest, a
 * fifth, is how late in its run a refusal right after a probe step is the step's: a share refused
 * whatever the pace lands there that rarely (`LearnedPace.refusedAfterProbe`).
 */
export const BACKGROUND_HELD = 0.8;
/**
 * A one-token bucket refuses every other request at any pace above its rate: a share this high is the
 * pace's doing, never a background share.
 */
export const MAX_BACKGROUND_SHARE = 0.5;
/**
 * A queue standing at the site is drained by slowing the pace for a window, by at most this share:
 * enough to clear in a window a queue that holds half of it, without halting a site for a noisy median
 * (BBR drains at about a third of its rate for one round).
 */
export const MAX_DRAIN = 0.5;
/**
 * The share of the time left to the crawl's horizon (when its slowest scope should finish) over which a
 * scope whose pace is a guess spreads its last few requests: it finishes before the horizon though
 * that estimate moves, and sends no faster than the crawl needs where a guess too fast costs a refusal.
 */
export const HORIZON_SHARE = 0.8;
