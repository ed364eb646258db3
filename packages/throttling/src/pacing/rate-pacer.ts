import { AdaptivePacer } from './adaptive-pacer';
import type { RampupData, RampupPolicy } from './rampup';
import { RampupState } from './rampup';
import type { AdaptiveData } from './adaptive-pacer';
import { clamp } from './rate-values';

/** The pacing a ramping scope follows: the adaptive pacer or the bracketed search. */
export type RatePacer = RampupState | AdaptivePacer;

/** What a pacer of either kind saves. */
export type RatePacerData = RampupData | AdaptiveData;

/**
 * What an earlier run learned of a scope's rate (requests per second): the pace it found safe, and
 * the lowest pace the site refused, when one was.
 */
export interface LearnedRate {
    rate: number;
    unsafeRate?: number;
}

/**
 * A new pacer for a scope, of the policy's algorithm. An adaptive pacer given what an earlier run
 * learned starts there, paced from the first request, instead of unpaced until the site refuses.
 */
export function createPacer(policy: RampupPolicy, learned?: LearnedRate): RatePacer {
    if (policy.algorithm !== 'adaptive') return new RampupState(policy);
    if (!learned) return new AdaptivePacer(policy.initialRate);
    const rate = clamp(learned.rate, policy);
    const pacer = new AdaptivePacer(rate);
    pacer.safeRate = rate;
    // The refused bound too, so the pacer holds near the learned rate rather than doubling past it.
    if (learned.unsafeRate !== undefined && learned.unsafeRate > rate) pacer.unsafeRate = learned.unsafeRate;
    return pacer;
}

/** Rebuilds a persisted pacer of either kind, or undefined when the data is malformed. */
export function pacerFromJSON(data: unknown, policy: RampupPolicy): RatePacer | undefined {
    const kind = typeof data === 'object' && data !== null ? (data as { kind?: unknown }).kind : undefined;
    return kind === 'adaptive' ? AdaptivePacer.fromJSON(data) : RampupState.fromJSON(data, policy);
}
