import { DomainState } from './domain-state';

/**
 * Where domain states live. The scheduler reads and updates states only through this interface,
 * so a store shared between several crawler processes can replace the in-memory one without
 * touching the scheduler. Calls are synchronous on purpose: a dispatch must arm its clock before
 * the first `await`, or two concurrent fetches could dispatch into the same window.
 */
export interface DomainStateStore {
    /** The state of `domain`, or undefined if the store has none. */
    read(domain: string): DomainState | undefined;
    /** Runs `mutate` on the state of `domain` (created if missing) and returns its result. */
    update<T>(domain: string, mutate: (state: DomainState) => T): T;
    /** Every state the store holds. */
    list(): Iterable<DomainState>;
    /** Forgets every state. */
    clear(): void;
    /**
     * Forgets the state of one domain (the shared queue layout evicts idle domains). A store without
     * it keeps every state it was given.
     */
    delete?(domain: string): void;
}

/** The default store: one process, states in a map. */
export class InMemoryDomainStateStore implements DomainStateStore {
    // Keyed by normalised domain key.
    private readonly states = new Map<string, DomainState>();

    read(domain: string): DomainState | undefined {
        return this.states.get(domain);
    }

    update<T>(domain: string, mutate: (state: DomainState) => T): T {
        let state = this.states.get(domain);
        if (!state) {
            state = new DomainState(domain);
            this.states.set(domain, state);
        }
        return mutate(state);
    }

    list(): Iterable<DomainState> {
        return this.states.values();
    }

    clear(): void {
        this.states.clear();
    }

    delete(domain: string): void {
        this.states.delete(domain);
    }
}
