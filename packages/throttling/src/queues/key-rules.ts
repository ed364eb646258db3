import type { DomainQueue } from '../core/domain-queue';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';

/**
 * How a queue layout bounds the keys of the registry, so the registry itself never asks which layout
 * it serves. `layout/` picks one of the two below with the rest of its layout.
 */
export interface KeyRules {
    /** Whether a new key may be registered while `known` keys are (else it is over the limit). */
    roomFor(known: number): boolean;
    /** A known key was met again. */
    met(entry: DomainQueue, touch: (entry: DomainQueue) => void): void;
    /** Whether a resumed run must reopen the key's queue. */
    reopens(entry: DomainQueue): boolean;
    /**
     * Whether requests of throttled keys are stored in the default `inner` and moved out of it, so that
     * on local storage a kill can lose a moved copy (see moved-requests.ts).
     */
    readonly movesOutOfInner: boolean;
}

/**
 * `'perDomain'`: every key has its queue, so a resumed run reopens each; past `maxThrottledDomains`
 * under `domains: 'all'` a new key is refused.
 */
export function boundedKeys(options: ResolvedThrottlingOptions): KeyRules {
    const bounded = options.domains === 'all';
    return {
        roomFor: (known) => !bounded || known < options.maxThrottledDomains,
        met: () => undefined,
        reopens: () => true,
        movesOutOfInner: false,
    };
}

/**
 * `'shared'`: no key is refused; keys are kept in least recently used order (idle ones are evicted),
 * and only a key whose window overflowed has a queue to reopen.
 */
export const RECENCY_KEYS: KeyRules = {
    roomFor: () => true,
    met: (entry, touch) => touch(entry),
    reopens: (entry) => entry.opened !== undefined || entry.opening !== undefined,
    movesOutOfInner: true,
};
