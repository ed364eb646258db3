import type { Configuration } from '@crawlee/core';

import { CompletionTracker } from './dispatch/completion-tracker';
import type { Ticket } from './dispatch/dispatcher';
import { Dispatcher } from './dispatch/dispatcher';
import { DomainFetcher } from './dispatch/domain-fetcher';
import { HandoutLedger } from './dispatch/handout-ledger';
import { InnerDrain } from './dispatch/inner-drain';
import { WakeSignal } from './integration/wake-signal';
import type { ResolvedThrottlingOptions } from './options/options';
import type { DomainStateStore } from './pacing/domain-state-store';
import { InMemoryDomainStateStore } from './pacing/domain-state-store';
import { PacingFloor } from './pacing/pacing-floor';
import { PacingRecorder } from './pacing/pacing-recorder';
import { QuotaLedger } from './pacing/quota-ledger';
import { StatePersister } from './persistence/state-persister';
import { DomainIntake } from './queues/domain-intake';
import type { DomainQueue } from './queues/domain-queue';
import { DomainRegistry } from './queues/domain-registry';
import { ReadinessProbe } from './readiness/readiness-probe';
import { ResponseInterpreter } from './response/response-interpreter';
import { OriginGate } from './robots/origin-gate';
import { ScopeRouter } from './routing/scope-router';
import { Scheduler } from './scheduling/scheduler';
import { SharedClockSync } from './shared-clock/shared-clock-sync';

/** The log lines collaborators write. */
export interface ManagerLog {
    warning(message: string): void;
    warningOnce(message: string): void;
    error(message: string, data?: Record<string, unknown>): void;
}

/** Everything a `ThrottlingRequestManager` delegates to, built once in {@link assemble}. */
export interface Collaborators {
    states: DomainStateStore;
    floor: PacingFloor;
    router: ScopeRouter;
    registry: DomainRegistry;
    scheduler: Scheduler;
    handouts: HandoutLedger;
    quotas: QuotaLedger;
    shared: SharedClockSync;
    dispatcher: Dispatcher;
    gate: OriginGate;
    persister: StatePersister;
    intake: DomainIntake;
    domainFetcher: DomainFetcher;
    innerDrain: InnerDrain;
    completions: CompletionTracker;
    recorder: PacingRecorder;
    responses: ResponseInterpreter;
    wake: WakeSignal;
    probe: ReadinessProbe;
}

/**
 * The composition root: builds the collaborators in dependency order and wires the few callbacks
 * that point back up (a changed clock reschedules its queue; a settled origin check wakes the pool).
 */
export function assemble(
    options: ResolvedThrottlingOptions,
    config: Configuration | undefined,
    log: ManagerLog,
): Collaborators {
    const { clock } = options;
    const now = () => clock.now();
    const warn = (m: string) => log.warning(m);
    const warnOnce = (m: string) => log.warningOnce(m);
    const states = options.stateStore ?? new InMemoryDomainStateStore();
    const floor = new PacingFloor(options.minCrawlDelayMs);
    const router = new ScopeRouter(options, warnOnce);
    const registry = new DomainRegistry(options, router, config);
    const handouts = new HandoutLedger();
    const quotas = new QuotaLedger(options, router, states, floor);
    const shared = new SharedClockSync(options.sharedClock, states, router, (k) => registry.get(k), warnOnce);
    const dispatcher = new Dispatcher(options, router, states, floor, shared, quotas, handouts, clock);
    const scheduler = new Scheduler({
        readyAt: (entry, at) => dispatcher.readyAt(entry, at),
        slotBound: (entry, at) => states.update(entry.key, (s) => s.noteSlotBound(at, router.policyOf(entry.key))),
    });
    const touch = (entry: DomainQueue) => scheduler.touch(entry, now());
    const wake = new WakeSignal(clock, () => scheduler.nextReadyAt(now()));
    const released = (entry: DomainQueue) => {
        touch(entry);
        wake.wake();
    };
    const gate = new OriginGate({
        now,
        readyAt: (entry, at) => dispatcher.readyAt(entry, at),
        openProbe: (entry, at) => dispatcher.open(entry, at, true),
        finishProbe: (ticket) => dispatcher.finishProbe(ticket as Ticket),
        released,
        warn,
    });
    const listedDomains = router.listedDomains;
    // A restored clock is never further ahead than the longest wait a live crawl could set.
    const restoreCapMs = (key: string) => {
        const policy = router.policyOf(key);
        return Math.max(policy.backoffMaxDelayMs, policy.delayMs, options.maxCrawlDelaySecs * 1000, floor.ms);
    };
    const persister = new StatePersister({
        restoreCapMs,
        options,
        config,
        clock,
        states,
        floor,
        registry,
        listedDomains,
        restored: touch,
        warn,
    });
    const intake = new DomainIntake({ options, clock, router, registry, states, gate, persister, scheduler });
    const domainFetcher = new DomainFetcher({ clock, registry, scheduler, dispatcher, gate });
    const error = (m: string, data: Record<string, unknown>) => log.error(m, data);
    const innerDrain = new InnerDrain({ clock, router, registry, intake, dispatcher, handouts, warnOnce, error });
    const changed = (key: string) => {
        shared.publish(key);
        const entry = registry.get(key);
        if (entry) touch(entry);
    };
    const escalated = () => persister.saveSoon();
    const paces = (key: string) => registry.paces(key);
    const recorder = new PacingRecorder(options, router, states, floor, {
        now,
        paces,
        changed,
        escalated,
        warn,
        warnOnce,
    });
    const responses = new ResponseInterpreter({
        options,
        clock,
        router,
        states,
        floor,
        handouts,
        shared,
        recorder,
        paces,
        warnOnce,
    });
    const completions = new CompletionTracker({
        clock,
        router,
        states,
        floor,
        registry,
        handouts,
        shared,
        scheduler,
        recorder,
    });
    const readyAt = (entry: DomainQueue, at: number) => dispatcher.readyAt(entry, at);
    const probe = new ReadinessProbe({
        clock,
        registry,
        scheduler,
        states,
        maxDomainStallMs: options.maxDomainStallMs,
        readyAt,
    });
    for (const key of listedDomains) states.update(key, () => undefined);
    return {
        ...{ states, floor, router, registry, scheduler, handouts, quotas, shared, dispatcher, gate, persister },
        ...{ intake, domainFetcher, innerDrain, completions, recorder, responses, wake, probe },
    };
}
