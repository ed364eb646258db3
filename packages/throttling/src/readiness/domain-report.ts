import type { DomainStateStore } from '../pacing/domain-state-store';
import type { PacingFloor } from '../pacing/pacing-floor';
import type { DomainRegistry } from '../queues/domain-registry';
import type { ScopeRouter } from '../scopes/scope-router';
import type { Clock } from '../core/clock';
import type { DomainSnapshot } from './readiness';
import { snapshotOf } from './snapshot';
import type { DomainStatistics } from './statistics';
import { statisticsOf } from './statistics';

/** What the report reads. */
export interface DomainReportDeps {
    clock: Clock;
    states: DomainStateStore;
    router: ScopeRouter;
    registry: DomainRegistry;
    floor: PacingFloor;
}

/** Every known domain as users see it: its statistics, and a frozen snapshot of its state. */
export class DomainReport {
    constructor(private readonly deps: DomainReportDeps) {}

    /** Domains that sent or were refused something; the others have nothing to tell. */
    stats(): readonly DomainStatistics[] {
        const { states, router } = this.deps;
        const rows = [...states.list()].map((s) => statisticsOf(s, router.policyOf(s.domain)));
        return Object.freeze(rows.filter((r) => r.requests > 0 || r.refused > 0));
    }

    snapshot(): readonly DomainSnapshot[] {
        const { states, router, registry, floor } = this.deps;
        const now = this.deps.clock.now();
        const out: DomainSnapshot[] = [];
        for (const state of states.list()) {
            const queued = registry.get(state.domain)?.queued ?? 0;
            out.push(snapshotOf(state, router.policyOf(state.domain), queued, floor.ms, now));
        }
        return Object.freeze(out);
    }
}
