/**
 * The saved form of a scope's pacing state (`DomainStateData`): plain numbers in one fixed order, and
 * the learner's own data, so another process can restore the scope. Writing reads the state's parts;
 * reading checks every number before the state takes them over (`DomainState.restore`, which cuts
 * the clocks). The order of `NUMERIC_FIELDS` is the order of the saved keys: changing it changes
 * every saved record.
 */

import { DomainState } from './domain-state';
import type { DomainStateData } from './domain-state-types';
import { BACKOFF_CLOCK_FIELDS } from './domain-state-types';
import type { RatePacer } from './rate-pacer';
import { pacerFromJSON } from './rate-pacer';

/** Every number of a saved state, in the order it is written. */
export const NUMERIC_FIELDS = [
    'crawlDelayMs',
    'nextDispatchAt',
    ...BACKOFF_CLOCK_FIELDS,
    'quotaWindowStart',
    'quotaSpent',
    'dispatched',
    'refusals',
    'handled',
    'consecutiveErrors',
    'backedOffMs',
    'freeRetries',
] as const satisfies readonly (keyof DomainStateData)[];

/** The saved form of `state`: its numbers in the order of `NUMERIC_FIELDS`, then its learner's data. */
export function saveState(state: DomainState): DomainStateData {
    const data = savedNumbers(state);
    const learner = state.rampupState;
    if (learner) data.rampup = learner.toJSON();
    return data;
}

/** The persisted numbers, in the order of `NUMERIC_FIELDS`. */
function savedNumbers(state: DomainState): DomainStateData {
    const data = { domain: state.domain } as DomainStateData;
    for (const key of NUMERIC_FIELDS) data[key] = 0;
    data.crawlDelayMs = state.crawlDelayMs;
    data.nextDispatchAt = state.nextDispatchAt;
    state.backoff.save(data);
    data.quotaWindowStart = state.limits.quotaWindowStart;
    data.quotaSpent = state.limits.quotaSpent;
    data.consecutiveErrors = state.limits.consecutiveErrors;
    data.dispatched = state.dispatched;
    data.handled = state.handled;
    return data;
}

/**
 * Makes `state` take over what a saved state says (clocks, counters, the learner), with every clock
 * cut to at most `maxAheadMs` after `now`: a record written by a faulty clock, or edited by hand,
 * must not put a scope to sleep for longer than a live backoff could.
 */
export function adoptSavedState(state: DomainState, saved: DomainState, now: number, maxAheadMs: number): void {
    state.restore(savedNumbers(saved), saved.rampupState, now + maxAheadMs, maxAheadMs);
}

/** Rebuilds a state from its saved form; undefined when the data has the wrong shape. */
export function restoreState(data: unknown): DomainState | undefined {
    const parsed = parseStateData(data);
    if (!parsed) return undefined;
    const state = new DomainState(parsed.data.domain);
    state.restore(parsed.data, parsed.learner, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    return state;
}

/**
 * Reads persisted data defensively: every number finite and not negative (a missing one is 0), and a
 * learner that parses. Undefined when the data has the wrong shape.
 */
function parseStateData(data: unknown): { data: DomainStateData; learner?: RatePacer } | undefined {
    if (typeof data !== 'object' || data === null) return undefined;
    const record = data as Record<string, unknown>;
    if (typeof record.domain !== 'string' || record.domain === '') return undefined;
    const parsed = { domain: record.domain } as DomainStateData;
    for (const key of NUMERIC_FIELDS) {
        const value = record[key] === undefined ? 0 : record[key];
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
        parsed[key] = value;
    }
    if (record.rampup === undefined) return { data: parsed };
    const learner = pacerFromJSON(record.rampup);
    return learner ? { data: parsed, learner } : undefined;
}
