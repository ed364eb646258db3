import type { Configuration } from '@crawlee/core';

import { AlternatingFetch } from '../dispatch/alternating-fetch';
import { CompletionTracker } from '../dispatch/completion-tracker';
import type { Ticket } from '../dispatch/dispatcher';
import { Dispatcher } from '../dispatch/dispatcher';
import { DomainFetcher } from '../dispatch/domain-fetcher';
import { HandoutLedger } from '../dispatch/handout-ledger';
import { InnerDrain } from './inner-drain';
import { ThrottlingEventEmitter } from '../core/throttling-events';
import type { LayoutStrategy } from '../layout/layout-strategy';
import { LAYOUTS } from '../layout/layouts';
import { WakeSignal } from '../readiness/wake-signal';
import { IpScopes } from '../ip/ip-scopes';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { ResolvedPolicy } from '../pacing/policy';
import type { DomainStateStore } from '../pacing/domain-state-store';
import { InMemoryDomainStateStore } from '../pacing/domain-state-store';
import { PacingFloor } from '../pacing/pacing-floor';
import { PacingRecorder } from '../dispatch/pacing-recorder';
import { QuotaLedger } from '../dispatch/quota-ledger';
import { ScopeEditor } from '../scopes/scope-editor';
import { LearnedRates } from '../persistence/learned-rates';
import { StatePersister } from '../persistence/state-persister';
import { BatchLanding } from '../queues/batch-landing';
import { DomainIntake } from './domain-intake';
import type { DomainQueue } from '../core/domain-queue';
import { DomainRegistry } from '../queues/domain-registry';
import { QueueTotals } from '../queues/queue-totals';
import { StoragePurge } from './storage-purge';
import { CrawlEnd } from '../readiness/crawl-end';
import { DomainReport } from '../readiness/domain-report';
import { ReadinessProbe } from '../readiness/readiness-probe';
import { ResponseInterpreter } from './response-interpreter';
import { CrawlerPort } from './crawler-port';
import { OriginBooks } from '../robots/origin-books';
import { OriginGate } from '../robots/origin-gate';
import { ScopeRouter } from '../scopes/scope-router';
import { Scheduler } from '../scheduling/scheduler';
import { SharedClockFailures } from '../shared-clock/shared-clock-failures';
import { SHARED_LEASE_MS, SHARED_RECHECK_MS, SharedClockSync } from '../shared-clock/shared-clock-sync';
import { SharedLimits } from '../shared-clock/shared-limits';
import { SharedRateSync } from '../shared-clock/shared-rate-sync';
import { SharedRefusals } from '../shared-clock/shared-refusals';

/** The log lines collaborators write. */
export interface ManagerLog {
    info(message: string): void;
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
    limits: SharedLimits;
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
    events: ThrottlingEventEmitter;
    editor: ScopeEditor;
    /** `fetchNextRequest()`: the domain queues and `inner` by turns. */
    fetcher: AlternatingFetch;
    totals: QueueTotals;
    report: DomainReport;
    end: CrawlEnd;
    purger: StoragePurge;
    /** The address scope of each request; undefined unless `throttleBy: 'ip'`. */
    ipScopes?: IpScopes;
    /** Where requests wait (`queueLayout`): the per-domain queues, or `inner` with the frontier window. */
    layout: LayoutStrategy;
    /** Whether `inner` has work a fetch could take now (not while the frontier window is full). */
    innerServable(): Promise<boolean>;
    /** A key's clocks changed outside a signal: reschedule its queue and publish them. */
    clocksChanged(key: string): void;
    /** What the crawler integration calls (`attach()` hands it over); the façade forwards to it too. */
    port: CrawlerPort;
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
    const core = buildCore(options, config, log);
    const flow = buildFlow(core);
    const signals = buildSignals(core, flow);
    const views = buildViews(core, flow, signals);
    for (const key of core.router.listedDomains) core.states.update(key, () => undefined);
    const { states, floor, router, registry, scheduler, handouts, quotas, shared, limits, dispatcher, wake, layout } =
        core;
    const port = new CrawlerPort({
        ...{ options, router, registry, states, dispatcher, wake, gate: flow.gate, report: views.report },
        ...{ recorder: signals.recorder, responses: signals.responses, changed: signals.clocksChanged },
    });
    return {
        port,
        ...{ states, floor, router, registry, scheduler, handouts, quotas, shared, limits, dispatcher, wake, layout },
        innerServable: core.innerServable,
        events: core.events,
        ipScopes: core.ipScopes,
        ...flow,
        ...signals,
        ...views,
    };
}

/** What every stage shares: the options, the log lines and the collaborators with no callbacks up. */
type Core = ReturnType<typeof buildCore>;

/** State, routing, queues, the dispatcher and the scheduler. */
function buildCore(options: ResolvedThrottlingOptions, config: Configuration | undefined, log: ManagerLog) {
    const { clock } = options;
    const now = () => clock.now();
    const warn = (m: string) => log.warning(m);
    const warnOnce = (m: string) => log.warningOnce(m);
    const learned = buildLearnedRates(options, config, log);
    const states = learned.watch(new InMemoryDomainStateStore());
    const floor = new PacingFloor(options.minCrawlDelayMs);
    const router = new ScopeRouter(options, warnOnce);
    // The one place the queue layout is chosen; everything else asks the strategy.
    const layoutKind = LAYOUTS[options.queueLayout];
    const registry = new DomainRegistry(options, router, layoutKind.keyRules(options), config);
    const handouts = new HandoutLedger();
    const late = (): { scheduler: Scheduler; wake: WakeSignal } => ({ scheduler, wake });
    const ipScopes: IpScopes | undefined = options.paceByIp ? buildIpScopes(options, log, late) : undefined;
    // A followed rate re-arms a key's clock: publish it and file the key again (the scheduler comes later).
    const rearmed = (key: string) => {
        shared.publish(key);
        const entry = registry.get(key);
        if (entry) scheduler.touch(entry, now());
    };
    const { shared, limits, failures, rates } = buildSharing(options, states, router, registry, log, rearmed);
    // A corrected cost may have freed quota: queues held for it look again.
    const quotaFreed = () => scheduler.releaseHolds(registry.all(), now());
    const quotas = new QuotaLedger(options, router, states, floor, limits, ipScopes, quotaFreed);
    const departed = (key: string) => rates.departed(key);
    // The origin gate's bookkeeping, made here because the dispatcher and the scheduler read it too.
    const origins = new OriginBooks();
    const dispatcher = new Dispatcher({
        ...{ options, router, states, floor, shared, limits, quotas, handouts, clock, origins, departed },
    });
    const scheduler = new Scheduler({
        readyAt: (entry, at) => dispatcher.readyAt(entry, at),
        slotBound: (entry, at) => states.update(entry.key, (s) => s.noteSlotBound(at, router.policyOf(entry.key))),
        checksRunning: (entry) => origins.checksRunning(entry),
    });
    const touch = (entry: DomainQueue) => scheduler.touch(entry, now());
    const wake = new WakeSignal(clock, () => scheduler.nextReadyAt(now()));
    const events = new ThrottlingEventEmitter(warn);
    const readyAt = (entry: DomainQueue, at: number) => dispatcher.readyAt(entry, at);
    const layout = layoutKind.build({
        options,
        clock,
        registry,
        states,
        router,
        readyAt,
        origins,
        scheduler,
        shared,
        warn,
    });
    // A failed background batch is reported here; its requests were not stored.
    const landing = new BatchLanding((e) =>
        log.error(`A background batch of addRequestsBatched failed; its requests were not added: ${e.message}`),
    );
    const innerServable = async () => layout.innerServable(await registry.getInner());
    return {
        ...{
            options,
            config,
            log,
            clock,
            now,
            warn,
            warnOnce,
            touch,
            events,
            ipScopes,
            learned,
            origins,
            layout,
            innerServable,
            landing,
        },
        ...{
            states,
            floor,
            router,
            registry,
            handouts,
            quotas,
            shared,
            limits,
            failures,
            rates,
            dispatcher,
            scheduler,
            wake,
        },
    };
}

/** The rates learned by earlier runs (`rememberLearnedRates`), read only when some scope paces adaptively. */
function buildLearnedRates(options: ResolvedThrottlingOptions, config: Configuration | undefined, log: ManagerLog) {
    const adaptive = (policy: ResolvedPolicy) => policy.rampup !== undefined;
    return new LearnedRates({
        settings: options.learnedRates,
        adaptive: () =>
            adaptive(options.defaultPolicy) ||
            adaptive(options.ipPolicy) ||
            [...options.scopes.values()].some(adaptive),
        config,
        clock: options.clock,
        warn: (m) => log.warning(m),
    });
}

/**
 * The IP scopes of `throttleBy: 'ip'`. A domain held for its host's first DNS answer is filed again
 * the moment the answer comes (unless something else has held it since).
 */
function buildIpScopes(
    options: ResolvedThrottlingOptions,
    log: ManagerLog,
    late: () => { scheduler: Scheduler; wake: WakeSignal },
): IpScopes {
    const now = () => options.clock.now();
    return new IpScopes({
        resolver: options.ipResolver!,
        now,
        warn: (m) => log.warning(m),
        released: (entry, heldUntil) => {
            if (!entry.liftHold(heldUntil)) return;
            const { scheduler, wake } = late();
            scheduler.refile(entry, now());
            wake.wake();
        },
    });
}

/** What is shared with other processes through `sharedClock`: the clocks, slots, quotas and learned rates, one failure policy. */
function buildSharing(
    options: ResolvedThrottlingOptions,
    states: DomainStateStore,
    router: ScopeRouter,
    registry: DomainRegistry,
    log: ManagerLog,
    changed: (key: string) => void,
) {
    const failures = new SharedClockFailures({
        mode: options.onSharedClockError,
        warn: (m) => log.warning(m),
        warnOnce: (m) => log.warningOnce(m),
        now: () => options.clock.now(),
    });
    const rates = new SharedRateSync({ shared: options.sharedClock, states, router, failures, changed });
    const shared = new SharedClockSync({
        shared: options.sharedClock,
        ...{ states, router, failures, rates },
        entryOf: (k) => registry.get(k),
    });
    const limits = new SharedLimits({
        shared: options.sharedClock,
        ...{ states, router, failures },
        leaseMs: SHARED_LEASE_MS,
        recheckMs: SHARED_RECHECK_MS,
    });
    return { shared, limits, failures, rates };
}

/** The way requests take: origin checks, persistence, intake and both fetch paths. */
function buildFlow(core: Core) {
    const { options, config, clock, now, warn, warnOnce, touch, states, floor, router, registry } = core;
    const { handouts, dispatcher, scheduler, wake, origins } = core;
    const gate = new OriginGate(
        {
            now,
            readyAt: (entry, at) => dispatcher.readyAt(entry, at),
            openProbe: (entry, at) => dispatcher.open(entry, at, true),
            finishProbe: (ticket) => dispatcher.finishProbe(ticket as Ticket),
            released: (entry) => {
                touch(entry);
                wake.wake();
            },
            warn,
        },
        origins,
    );
    // A restored clock is never further ahead than the longest wait a live crawl could set.
    const restoreCapMs = (key: string) => {
        const policy = router.policyOf(key);
        return Math.max(policy.backoffMaxDelayMs, policy.delayMs, options.maxCrawlDelaySecs * 1000, floor.ms);
    };
    const listedDomains = router.listedDomains;
    // A scope changed at run time: every domain is filed again by its new pace, and the change saved.
    const editor = new ScopeEditor(options, router, () => {
        for (const entry of registry.all()) scheduler.refile(entry, now());
        persister.saveSoon();
    });
    const scopeUpdates = () => editor.saved();
    const restoreScopeUpdates = (saved: Record<string, unknown>) => editor.restore(saved, warn);
    const persister: StatePersister = new StatePersister({
        learned: core.learned,
        scopeUpdates,
        restoreScopeUpdates,
        ...{ options, config, clock, states, floor, registry, listedDomains, restoreCapMs, restored: touch, warn },
        layout: core.layout,
    });
    const { events, layout, ipScopes, landing } = core;
    const intake = new DomainIntake({
        ...{ options, clock, router, registry, states, gate, persister, scheduler, events, layout, ipScopes, warn },
        ...{ landing, warnOnce: core.warnOnce },
    });
    const domainFetcher = new DomainFetcher({ clock, registry, scheduler, dispatcher, gate, layout });
    const error = (m: string, data: Record<string, unknown>) => core.log.error(m, data);
    const innerDrain = new InnerDrain({
        ...{ clock, router, registry, intake, dispatcher, handouts, layout, origins, warnOnce, error },
    });
    return { gate, persister, intake, domainFetcher, innerDrain, editor };
}

/** What answers teach: pacing signals, responses, completions, and the readiness probe. */
function buildSignals(core: Core, flow: ReturnType<typeof buildFlow>) {
    const { options, clock, now, warn, warnOnce, touch, states, floor, router, registry } = core;
    const { handouts, shared, scheduler, dispatcher, wake } = core;
    // The horizon is renewed from a key whose clocks moved: held by them, it sends nothing that would.
    const estimate = (key: string) => {
        const entry = registry.get(key);
        if (entry) dispatcher.estimateFinish(entry, now());
        return entry;
    };
    const changed = (key: string) => {
        shared.publish(key);
        const entry = estimate(key);
        if (entry) touch(entry);
    };
    // A raised pace moved a key's clock earlier: its heap item would be too late.
    const sooner = (key: string) => {
        shared.publish(key);
        const entry = registry.get(key);
        if (entry) scheduler.refile(entry, now());
        wake.schedule();
    };
    const escalated = () => flow.persister.saveSoon();
    const paces = (key: string) => registry.paces(key);
    const refusals = new SharedRefusals({
        shared: options.sharedClock,
        states,
        router,
        failures: core.failures,
        changed,
    });
    const { rates } = core;
    const recorder = new PacingRecorder(options, router, states, floor, {
        now,
        paces,
        changed,
        sooner,
        refused: (key, serverWaitMs, localWaitMs) => {
            refusals.record(key, serverWaitMs, localWaitMs);
            rates.refused(key);
        },
        accepted: (key) => rates.accepted(key),
        escalated,
        warn,
        warnOnce,
        events: core.events,
    });
    const responses = new ResponseInterpreter({
        ...{ options, clock, router, states, floor, handouts, shared, recorder, paces, warnOnce },
        announced: estimate,
    });
    const completions = new CompletionTracker({
        ...{ clock, router, states, floor, registry, handouts, shared, limits: core.limits, scheduler, recorder },
    });
    // An evicted key met again is a new one: what robots.txt said of its origins is read again.
    core.layout.onForget((key) => recorder.forget(key));
    const readyAt = (entry: DomainQueue, at: number) => dispatcher.readyAt(entry, at);
    const maxDomainStallMs = options.maxDomainStallMs;
    const { innerServable, layout, landing } = core;
    const probe = new ReadinessProbe({
        ...{ clock, registry, scheduler, states, maxDomainStallMs, readyAt, innerServable },
        landing: (queue) => landing.landing(queue),
        tidy: (at) => layout.tidy(at),
        windowed: (entry) => layout.windowed(entry),
        idle: () => wake.schedule(),
        sharedLive: options.storageSharedLive,
        adoptShared: () => flow.persister.adoptSharedQueues(),
    });
    return { recorder, responses, completions, probe, clocksChanged: changed };
}

/** What the manager answers about the whole crawl: fetch order, counts, reports, its end and a purge. */
function buildViews(core: Core, flow: ReturnType<typeof buildFlow>, signals: ReturnType<typeof buildSignals>) {
    const { clock, states, router, registry, floor, scheduler, layout, wake, events } = core;
    const { innerDrain, persister } = flow;
    const report = new DomainReport({ clock, states, router, registry, floor });
    return {
        fetcher: new AlternatingFetch(innerDrain, flow.domainFetcher),
        totals: new QueueTotals({ registry, movedCount: () => innerDrain.movedCount }),
        report,
        end: new CrawlEnd({ report, wake, persister, events, info: (m) => core.log.info(m) }),
        purger: new StoragePurge({
            ...{ registry, scheduler, states, layout, innerDrain, origins: core.origins },
            listedDomains: router.listedDomains,
            recorder: signals.recorder,
            config: core.config,
            persistStateKey: core.options.persistStateKey,
        }),
    };
}
