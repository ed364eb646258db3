import { PaceLearner } from './pace-learner';
import type { RampupPolicy } from './rampup-policy';
import { clamp, storedRate } from './rate-values';

/** The pacing a ramping scope follows. */
export type RatePacer = PaceLearner;

export type { AdaptiveData as RatePacerData } from './adaptive-data';

/**
 * What an earlier run learned of a scope's rate (requests per second): the pace it found safe, and
 * the lowest pace the site refused, when one was.
 */
export interface LearnedRate {
    rate: number;
    unsafeRate?: number;
}

/**
 * A new learner for a scope. Given what an earlier run learned it starts there, paced from the first
 * request, instead of unpaced until the site gives a signal.
 */
export function createPacer(policy: RampupPolicy, learned?: LearnedRate): RatePacer {
    if (!learned) return new PaceLearner(policy.initialRate);
    const rate = clamp(learned.rate, policy);
    const pacer = new PaceLearner(rate);
    pacer.safeRate = rate;
    // The refused bound too, so the learner holds near the learned rate rather than doubling past it.
    if (learned.unsafeRate !== undefined && learned.unsafeRate > rate) pacer.unsafeRate = learned.unsafeRate;
    return pacer;
}

/**
 * Rebuilds a persisted learner, or undefined when the data is malformed. A state saved by the removed
 * bracketed search (no `kind`) starts a learner from the rate that search had found safe.
 */
export function pacerFromJSON(data: unknown): RatePacer | undefined {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
    const d = data as Record<string, unknown>;
    if (d.kind === 'adaptive') return PaceLearner.fromJSON(data);
    const safe = storedRate(d.safeRate);
    const learner = new PaceLearner();
    if (safe !== undefined && Number.isFinite(safe)) {
        learner.rate = safe;
        learner.safeRate = safe;
    }
    return learner;
}
