import type { Request } from '@crawlee/core';

import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { PacingRecorder } from '../dispatch/pacing-recorder';
import type { Dispatcher } from '../dispatch/dispatcher';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { DomainRegistry } from '../queues/domain-registry';
import type { DomainReport } from '../readiness/domain-report';
import type { DomainStatistics } from '../readiness/statistics';
import type { WakeSignal } from '../readiness/wake-signal';
import type { NavigationContext } from '../response/navigation-context';
import type { DomainGate, DomainGateOptions, OriginGate } from '../robots/origin-gate';
import { RobotsPause } from '../robots/robots-pause';
import type { ScopeRouter } from '../scopes/scope-router';
import type { ResponseInterpreter } from './response-interpreter';
import type { PacingSignal } from './scoped-signal';
import { ScopedSignals } from './scoped-signal';
import type { ThrottlerPort } from './throttler-port';

/** The collaborators the port forwards to. */
export interface CrawlerPortDeps {
    options: ResolvedThrottlingOptions;
    router: ScopeRouter;
    registry: DomainRegistry;
    states: DomainStateStore;
    recorder: PacingRecorder;
    responses: Pick<ResponseInterpreter, 'handle'>;
    dispatcher: Pick<Dispatcher, 'checkReachable' | 'departs'>;
    gate: Pick<OriginGate, 'set'>;
    wake: Pick<WakeSignal, 'subscribe'>;
    report: Pick<DomainReport, 'stats'>;
    /** A key's clocks changed outside a signal: reschedule its queue and publish them. */
    changed(key: string): void;
}

/**
 * The {@link ThrottlerPort} over a manager's collaborators: what the crawler integration calls,
 * and what the manager's own `handleResponse`, `checkReachable` and `recordPacingSignal` forward to.
 */
export class CrawlerPort implements ThrottlerPort {
    readonly options: ResolvedThrottlingOptions;
    // Whether responses reach the throttler (attach() or handleResponse() ran): silences a warning.
    private reached = false;
    // Applies pacing signals, with or without a scope.
    private readonly signals: ScopedSignals;
    // Holds a domain between robots.txt reads that failed, without counting a refusal.
    private readonly robotsPause: RobotsPause;

    constructor(private readonly deps: CrawlerPortDeps) {
        const { options, router, recorder, registry } = deps;
        this.options = options;
        this.signals = new ScopedSignals({ options, router, recorder, paces: (k) => registry.paces(k) });
        this.robotsPause = new RobotsPause({
            states: deps.states,
            policyOf: (key) => router.policyOf(key),
            now: () => options.clock.now(),
            changed: (key) => deps.changed(key),
        });
    }

    /** Whether responses reach the throttler. */
    get integrated(): boolean {
        return this.reached;
    }

    stats(): readonly DomainStatistics[] {
        return this.deps.report.stats();
    }

    markIntegrated(): void {
        this.reached = true;
    }

    async handleResponse(context: NavigationContext, response: unknown): Promise<void> {
        this.reached = true;
        await this.deps.responses.handle(context, response);
    }

    checkReachable(context: { request: Request }): void {
        this.deps.dispatcher.checkReachable(context.request);
    }

    departs(context: { request: Request }): number {
        return this.deps.dispatcher.departs(context.request);
    }

    onWake(listener: () => void): () => void {
        return this.deps.wake.subscribe(listener);
    }

    setDomainGate(gate: DomainGate | undefined, options: DomainGateOptions = {}): void {
        this.deps.gate.set(gate, options);
    }

    recordPacingSignal(signal: PacingSignal): boolean {
        return this.signals.record(signal);
    }

    skipForCrawlDelay(url: string, declaredSecs: number | undefined): void {
        this.deps.recorder.skipForCrawlDelay(url, declaredSecs);
    }

    noteRobotsRead(url: string, answered: boolean): boolean {
        return this.deps.recorder.robotsRead(url, answered);
    }

    pauseForRobots(url: string, waitMs: number | undefined, retriesMade: number): void {
        const key = this.deps.router.domainKeyOf(url);
        if (key === undefined || !this.deps.registry.paces(key)) return;
        this.robotsPause.pause(key, waitMs, retriesMade);
    }
}
