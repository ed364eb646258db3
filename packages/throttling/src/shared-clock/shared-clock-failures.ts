import type { DomainQueue } from '../core/domain-queue';
import type { MaybePromise } from '../core/maybe-promise';
import { isPromise } from '../core/maybe-promise';

/** How long a domain waits before asking a shared clock that failed again (`onSharedClockError: 'pause'`). */
export const SHARED_ERROR_RETRY_MS = 1_000;

/** What to do when the shared clock fails: hold the domain and ask again, or pace it locally. */
export type SharedClockErrorMode = 'pause' | 'local';

/** Timers the shared clock's retries and renewals run on (unref'd: they never keep a process alive). */
export interface TimerHost {
    set(run: () => void, ms: number): unknown;
    clear(handle: unknown): void;
}

/** Node's timers, unref'd. */
export const NODE_TIMERS: TimerHost = {
    set: (run, ms) => setTimeout(run, ms).unref(),
    clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What {@link SharedClockFailures} needs. */
export interface SharedClockFailuresOptions {
    mode: SharedClockErrorMode;
    /** A line per failure that holds a domain (`'pause'`). */
    warn(message: string): void;
    /** A line once per message (fallbacks, lost sharing). */
    warnOnce(message: string): void;
    now(): number;
    /** @default {@link SHARED_ERROR_RETRY_MS} */
    retryMs?: number;
    /** @default {@link NODE_TIMERS} */
    timers?: TimerHost;
}

/**
 * The one policy for a failing shared clock (`onSharedClockError`), so every call that can fail
 * (reserve, slots, quotas, refusals, lease ends) fails alike: never thrown out of a fetch, never
 * silent, never losing a request.
 */
export class SharedClockFailures {
    readonly mode: SharedClockErrorMode;
    readonly retryMs: number;
    readonly timers: TimerHost;

    constructor(private readonly options: SharedClockFailuresOptions) {
        this.mode = options.mode;
        this.retryMs = options.retryMs ?? SHARED_ERROR_RETRY_MS;
        this.timers = options.timers ?? NODE_TIMERS;
    }

    now(): number {
        return this.options.now();
    }

    /** Logs `message` (a failure that holds something back). */
    warn(message: string): void {
        this.options.warn(message);
    }

    /** Logs `message` once (sharing that slipped, a fallback). */
    warnOnce(message: string): void {
        this.options.warnOnce(message);
    }

    /**
     * A call that decides a dispatch failed (`what`: which one). `'local'`: the dispatch goes on,
     * paced by this process alone, with one warning (true). `'pause'`: the domain is held and asked
     * again after {@link retryMs}, with a line naming it and the error (false).
     */
    gate(entry: DomainQueue, now: number, what: string, error: unknown): boolean {
        if (this.mode === 'local') {
            this.options.warnOnce(
                `The shared clock failed (${what}: ${String(error)}); pacing by this process alone until it answers again.`,
            );
            return true;
        }
        this.options.warn(
            `The shared clock failed for ${entry.key} (${what}: ${String(error)}); holding it and asking again in ${this.retryMs} ms (onSharedClockError: 'pause').`,
        );
        entry.holdUntil(now + this.retryMs);
        return false;
    }

    /** Runs an update whose failure only costs the sharing: logged once, never thrown; `failed` then runs. */
    quietly(what: string, update: () => MaybePromise<unknown>, failed?: () => void): void {
        const onError = (error: unknown) => {
            this.warnOnce(`${what}: ${String(error)}`);
            failed?.();
        };
        try {
            const done = update();
            if (isPromise(done)) done.catch(onError);
        } catch (error) {
            onError(error);
        }
    }

    /**
     * Runs an update other processes wait for (a lease end, a slot release): a failure (a short
     * outage) is logged once and the update sent again every {@link retryMs} while it still matters,
     * until `until` (this process's time), rather than leaving the others to wait it out.
     */
    persist(what: string, update: () => MaybePromise<unknown>, until: number): void {
        const attempt = () =>
            this.quietly(what, update, () => {
                if (this.now() + this.retryMs < until) this.timers.set(attempt, this.retryMs);
            });
        attempt();
    }
}
