import { AdaptivePacer } from './adaptive-pacer';
import type { RampupData, RampupPolicy } from './rampup';
import { RampupState } from './rampup';
import type { AdaptiveData } from './adaptive-pacer';

/** The pacing a ramping scope follows: the adaptive pacer or the bracketed search. */
export type RatePacer = RampupState | AdaptivePacer;

/** What a pacer of either kind saves. */
export type RatePacerData = RampupData | AdaptiveData;

/** A new pacer for a scope, of the policy's algorithm. */
export function createPacer(policy: RampupPolicy): RatePacer {
    return policy.algorithm === 'adaptive' ? new AdaptivePacer(policy.initialRate) : new RampupState(policy);
}

/** Rebuilds a persisted pacer of either kind, or undefined when the data is malformed. */
export function pacerFromJSON(data: unknown, policy: RampupPolicy): RatePacer | undefined {
    const kind = typeof data === 'object' && data !== null ? (data as { kind?: unknown }).kind : undefined;
    return kind === 'adaptive' ? AdaptivePacer.fromJSON(data) : RampupState.fromJSON(data, policy);
}
