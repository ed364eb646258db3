import { DEFAULTS } from '../options/defaults';

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
    windowMs: DEFAULTS.rampupSettings.windowSecs * 1000,
    initialRate: Number.POSITIVE_INFINITY,
    minRate: DEFAULTS.rampupSettings.minRate,
    maxRate: DEFAULTS.rampupSettings.maxRate,
    maxConcurrency: DEFAULTS.rampupSettings.maxConcurrency,
};
