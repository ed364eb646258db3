import type { DomainState, DomainStateData } from '../pacing/domain-state';
import { restoreState } from '../pacing/domain-state-codec';

/** Version of the persisted record; a record of another version is treated as unknown. */
export const PERSISTED_STATE_VERSION = 1;

/**
 * What a manager keeps in the key-value store under `persistStateKey`: the domains it discovered
 * (so their queues are reopened on resume) and every domain's
 * clocks in epoch milliseconds (so a restarted crawl honours a backoff that was running).
 */
export interface PersistedThrottlingState {
    version: typeof PERSISTED_STATE_VERSION;
    savedAt: number;
    floorMs: number;
    domains: string[];
    states: Record<string, DomainStateData>;
    /** Scope settings changed at run time (`updateScope()`), by scope key; validated again on resume. */
    scopeUpdates?: Record<string, unknown>;
}

/** The usable content of a persisted record, or the reason it cannot be used. */
export type ParsedPersistedState =
    | { ok: true; domains: string[]; states: DomainState[]; floorMs: number; scopeUpdates?: Record<string, unknown> }
    | { ok: false; reason: string; domains: string[] };

/**
 * Reads a persisted record defensively: a record of the wrong shape never throws. When the clocks
 * cannot be trusted, the domain list is still salvaged if it is a list of strings, so queues can be
 * reopened.
 */
export function parsePersistedState(value: unknown): ParsedPersistedState | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value))
        return { ok: false, reason: `expected an object, got ${describe(value)}`, domains: [] };
    const record = value as Record<string, unknown>;
    const domains = Array.isArray(record.domains)
        ? record.domains.filter((d): d is string => typeof d === 'string' && d !== '')
        : [];
    if (record.version !== PERSISTED_STATE_VERSION) {
        return {
            ok: false,
            reason: `unknown version ${JSON.stringify(record.version)} (expected ${PERSISTED_STATE_VERSION})`,
            domains,
        };
    }
    if (!Array.isArray(record.domains)) return { ok: false, reason: '`domains` is not a list', domains };
    if (typeof record.states !== 'object' || record.states === null || Array.isArray(record.states)) {
        return { ok: false, reason: '`states` is not an object', domains };
    }
    const states: DomainState[] = [];
    for (const [domain, data] of Object.entries(record.states as Record<string, unknown>)) {
        const state = restoreState(data);
        if (!state || state.domain !== domain)
            return { ok: false, reason: `the state of ${domain} has a wrong shape`, domains };
        states.push(state);
    }
    const floorMs =
        typeof record.floorMs === 'number' && Number.isFinite(record.floorMs) && record.floorMs >= 0
            ? record.floorMs
            : 0;
    const updates = record.scopeUpdates;
    const usable = typeof updates === 'object' && updates !== null && !Array.isArray(updates);
    const scopeUpdates = usable ? Object.fromEntries(Object.entries(updates as Record<string, unknown>)) : {};
    // Only records written after a run-time change carry them.
    return { ok: true, domains, states, floorMs, ...(Object.keys(scopeUpdates).length ? { scopeUpdates } : {}) };
}

function describe(value: unknown): string {
    return Array.isArray(value) ? 'a list' : typeof value;
}
