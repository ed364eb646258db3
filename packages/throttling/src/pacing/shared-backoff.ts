import type { SharedRefusal } from '../core/shared-limit-types';
import type { DomainState } from './domain-state';
import { MAX_BACKOFF_EXPONENT } from './domain-state';

/**
 * Takes over the backoff the shared clock answered for a refusal this process recorded, when it is
 * longer than this process's own: another process's burst already set it, or the shared level
 * (bursts seen by every process) is higher than this process's exponent. Under rampup the exponent
 * stays the pacer's (it starts over on every answer). Returns whether the backoff grew.
 */
export function adoptSharedBackoff(state: DomainState, shared: SharedRefusal, now: number, rampup: boolean): boolean {
    if (!rampup && shared.level > state.backoffExponent)
        state.backoffExponent = Math.min(shared.level, MAX_BACKOFF_EXPONENT);
    if (!(shared.backoffUntil > state.backoffUntil)) return false;
    const grownBy = shared.backoffUntil - state.backoffUntil;
    state.backedOffMs += shared.backoffUntil - Math.max(state.backoffUntil, now);
    // The quiet period that resets the exponent counts from the backoff's end: it moves with it.
    if (state.decayAt > 0) state.decayAt += grownBy;
    state.backoffUntil = shared.backoffUntil;
    if (state.lastRefusalAt > 0)
        state.lastImposedMs = Math.max(state.lastImposedMs, state.backoffUntil - state.lastRefusalAt);
    return true;
}
