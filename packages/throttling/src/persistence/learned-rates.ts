import type { Configuration } from '@crawlee/core';
import { KeyValueStore } from '@crawlee/core';

import type { DomainState } from '../pacing/domain-state';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { Clock } from '../core/clock';
import type { LearnedRateEntry } from './learned-rate-record';
import { isFresh, LEARNED_RATES_KEY, mergeLearnedRates, parseLearnedRates } from './learned-rate-record';

/** What keeping learned rates needs. */
export interface LearnedRatesDeps {
    /** The store and the age limit; undefined when `rememberLearnedRates` is false. */
    settings?: { storeName: string; maxAgeMs: number };
    /** Whether any scope paces adaptively (otherwise nothing is read, and the store is never opened). */
    adaptive(): boolean;
    config?: Configuration;
    clock: Clock;
    warn(message: string): void;
}

/**
 * Keeps the rate adaptive pacing learned for each scope in a named key-value store (which
 * `purgeOnStart` leaves alone), and starts a scope seen for the first time from it, so a second crawl
 * of a site does not probe from scratch. Written with the throttling state (Crawlee's `persistState`
 * and the end of the crawl); read once on first use.
 */
export class LearnedRates {
    // Fresh entries read from the store, by scope key.
    private readonly known = new Map<string, LearnedRateEntry>();
    // What was last written (or read) per scope, and how many requests it had sent then.
    private readonly written = new Map<string, { fingerprint: string; dispatched: number }>();

    constructor(private readonly deps: LearnedRatesDeps) {}

    /**
     * `store`, seeding each state it creates from its learned rate: the one moment every scope passes
     * through before it first paces, whichever collaborator meets it first.
     */
    watch(store: DomainStateStore): DomainStateStore {
        if (!this.deps.settings) return store;
        return new SeedingStateStore(store, (state) => this.seed(state));
    }

    /** Reads the store (first use) and seeds the states that exist already and have sent nothing. */
    async load(states: DomainStateStore): Promise<void> {
        const { settings } = this.deps;
        if (!settings || !this.deps.adaptive()) return;
        let stored: Map<string, LearnedRateEntry>;
        try {
            stored = parseLearnedRates(await (await this.open(settings.storeName)).getValue(LEARNED_RATES_KEY));
        } catch (error) {
            this.deps.warn(`Learned rates could not be read from ${settings.storeName}: ${String(error)}`);
            return;
        }
        const now = this.deps.clock.now();
        for (const [key, entry] of stored) {
            if (!isFresh(entry, now, settings.maxAgeMs)) continue;
            this.known.set(key, entry);
            this.written.set(key, { fingerprint: fingerprint(entry), dispatched: 0 });
        }
        for (const state of states.list()) this.seed(state);
    }

    /**
     * Writes the rates learned (or confirmed by crawling) since the last save, merged into what the
     * store holds. Does nothing without a change; a failure is logged, never thrown.
     */
    async save(states: Iterable<DomainState>): Promise<void> {
        const { settings } = this.deps;
        if (!settings) return;
        const now = this.deps.clock.now();
        const changed = new Map<string, LearnedRateEntry>();
        const marks = new Map<string, { fingerprint: string; dispatched: number }>();
        for (const state of states) {
            const entry = learnedOf(state, now);
            if (!entry) continue;
            const mark = { fingerprint: fingerprint(entry), dispatched: state.dispatched };
            const last = this.written.get(state.domain);
            if (last && last.fingerprint === mark.fingerprint && last.dispatched === mark.dispatched) continue;
            changed.set(state.domain, entry);
            marks.set(state.domain, mark);
        }
        if (changed.size === 0) return;
        try {
            const store = await this.open(settings.storeName);
            const stored = parseLearnedRates(await store.getValue(LEARNED_RATES_KEY));
            await store.setValue(LEARNED_RATES_KEY, mergeLearnedRates(stored, changed, now, settings.maxAgeMs));
            for (const [key, mark] of marks) this.written.set(key, mark);
        } catch (error) {
            this.deps.warn(`Learned rates could not be saved to ${settings.storeName}: ${String(error)}`);
        }
    }

    private seed(state: DomainState): void {
        const entry = this.known.get(state.domain);
        if (entry) state.startFrom({ rate: entry.rate, unsafeRate: entry.unsafeRate });
    }

    private open(name: string): Promise<KeyValueStore> {
        return KeyValueStore.open(name, { config: this.deps.config });
    }
}

/** What a state's adaptive pacer has learned: its safe pace, and the lowest refused when known. */
function learnedOf(state: DomainState, now: number): LearnedRateEntry | undefined {
    const pacer = state.rampupState;
    if (!pacer) return undefined;
    const rate = pacer.safeRate;
    if (!(rate > 0) || !Number.isFinite(rate)) return undefined;
    const unsafe = pacer.unsafeRate;
    return Number.isFinite(unsafe) && unsafe > rate
        ? { rate, unsafeRate: unsafe, learnedAt: now }
        : { rate, learnedAt: now };
}

function fingerprint(entry: LearnedRateEntry): string {
    return `${entry.rate}/${entry.unsafeRate ?? ''}`;
}

/** A state store that calls `seed` on each state it creates, before anything else touches it. */
class SeedingStateStore implements DomainStateStore {
    constructor(
        private readonly inner: DomainStateStore,
        private readonly seed: (state: DomainState) => void,
    ) {}

    read(domain: string): DomainState | undefined {
        return this.inner.read(domain);
    }

    update<T>(domain: string, mutate: (state: DomainState) => T): T {
        if (this.inner.read(domain) !== undefined) return this.inner.update(domain, mutate);
        return this.inner.update(domain, (state) => {
            this.seed(state);
            return mutate(state);
        });
    }

    list(): Iterable<DomainState> {
        return this.inner.list();
    }

    clear(): void {
        this.inner.clear();
    }

    // Eviction (queueLayout 'shared') forgets a key's state through here.
    delete(domain: string): void {
        this.inner.delete?.(domain);
    }
}
