import type { DomainStateStore } from '../pacing/domain-state-store';
import type { ScopeRouter } from '../scopes/scope-router';
import { andThen, outcomeOf } from '../core/maybe-promise';
import type { SharedClockFailures } from './shared-clock-failures';
import type { SharedDomainClock } from '../core/shared-domain-clock';
import type { RefusalPolicy, SharedRefusal } from '../core/shared-limit-types';

/** What {@link SharedRefusals} works with. */
export interface SharedRefusalsOptions {
    shared: SharedDomainClock | undefined;
    states: DomainStateStore;
    router: ScopeRouter;
    failures: SharedClockFailures;
    /** The clocks of `key` changed (a longer shared backoff was taken over): reschedule and publish. */
    changed(key: string): void;
}

/**
 * Refusals recorded in the shared clock when it offers `recordRefusal`, so that the backoff escalates
 * once per burst across every process (not once per process) and the largest wait wins: each process
 * takes over the shared backoff when it is longer than its own.
 */
export class SharedRefusals {
    constructor(private readonly options: SharedRefusalsOptions) {}

    /**
     * Records a refusal of `key` that this process just applied to its own clocks (`localWaitMs`, the
     * wait it imposed). Called before the process publishes its own backoff, so the shared clock
     * decides the escalation first. A server wait (`serverWaitMs`) goes as it is; without one the
     * shared level sets the step, except under rampup, whose pacer chose the step (sent as the wait).
     */
    record(key: string, serverWaitMs: number | undefined, localWaitMs: number): void {
        const { shared, router } = this.options;
        if (!shared?.recordRefusal) return;
        const policy = router.policyOf(key);
        const refusal: RefusalPolicy = {
            waitMs:
                serverWaitMs !== undefined && serverWaitMs > 0 ? serverWaitMs : policy.rampup ? localWaitMs : undefined,
            baseMs: Math.max(1, policy.backoffMinDelayMs),
            maxMs: Math.max(1, policy.backoffMaxDelayMs),
            factor: policy.backoffFactor,
        };
        this.send(key, refusal, policy.rampup !== undefined);
    }

    private send(key: string, refusal: RefusalPolicy, rampup: boolean): void {
        const recorded = outcomeOf(() =>
            this.options.shared!.recordRefusal!(key, refusal, this.options.failures.now()),
        );
        void andThen(recorded, (answer) => {
            if (answer.ok) this.adopt(key, answer.value, rampup);
            else this.failed(key, refusal, rampup, answer.error);
        });
    }

    private adopt(key: string, answer: SharedRefusal, rampup: boolean): void {
        const now = this.options.failures.now();
        const longer = this.options.states.update(key, (s) => s.adoptSharedBackoff(answer, now, rampup));
        if (longer) this.options.changed(key);
    }

    /**
     * This process keeps its own backoff either way. `'pause'`: the refusal is sent again while that
     * backoff runs (the others should hear of it), a line per failure; `'local'`: one warning.
     */
    private failed(key: string, refusal: RefusalPolicy, rampup: boolean, error: unknown): void {
        const { failures, states } = this.options;
        if (failures.mode === 'local') {
            failures.warnOnce(
                `The shared clock failed (recordRefusal: ${String(error)}); backing off by this process alone until it answers again.`,
            );
            return;
        }
        // Sent again only while it still tells the others something: this process's backoff runs.
        const resend = failures.now() + failures.retryMs < (states.read(key)?.backoffUntil ?? 0);
        const again = resend ? ` and telling the others again in ${failures.retryMs} ms` : '';
        failures.warn(
            `The shared clock failed for ${key} (recordRefusal: ${String(error)}); keeping this process's backoff${again} (onSharedClockError: 'pause').`,
        );
        if (resend) failures.timers.set(() => this.send(key, refusal, rampup), failures.retryMs);
    }
}
