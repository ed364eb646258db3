/** The resolved settings of a scope's pace learner (see pace-learner.ts and docs/rampup.md). */
export interface RampupPolicy {
    /** Least length of a measuring window, ms. */
    windowMs: number;
    /** Pace to start from (requests per second); Infinity: unpaced until the site gives a signal. */
    initialRate: number;
    /** Bounds of the pace, requests per second. */
    minRate: number;
    maxRate: number;
    /** Most concurrency the learner may reach by adding slots. */
    maxConcurrency: number;
}

export const RAMPUP_DEFAULTS: RampupPolicy = {
    windowMs: 1_000,
    initialRate: Number.POSITIVE_INFINITY,
    minRate: 0.01,
    maxRate: 1_000,
    maxConcurrency: 8,
};
