import type { Clock } from '../core/clock';

/** Node runs a longer `setTimeout` at once (and warns): wake-ups further out are re-armed in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Wakes a crawler's pool the moment held-back work becomes ready, instead of leaving it to poll:
 * one unref'd timer for the earliest ready time, and listeners to call.
 */
export class WakeSignal {
    // Called on every wake-up (the crawler integration notifies the pool).
    private readonly listeners = new Set<() => void>();
    // The pending timer, and when it fires.
    private timer?: NodeJS.Timeout;
    private at = Infinity;

    constructor(
        private readonly clock: Clock,
        private readonly nextReadyAt: () => number | undefined,
    ) {}

    /** Adds a listener; returns its unsubscribe (the last one out stops the timer). */
    subscribe(listener: () => void): () => void {
        this.listeners.add(listener);
        return () => {
            this.listeners.delete(listener);
            if (this.listeners.size === 0) this.clear();
        };
    }

    /** Arms the timer for the earliest ready time of held-back work, if earlier than the armed one. */
    schedule(): void {
        if (this.listeners.size === 0) return;
        const at = this.nextReadyAt();
        if (at === undefined || at >= this.at) return;
        this.clear();
        this.at = at;
        // A millisecond late rather than early: a wake-up before the deadline finds nothing ready.
        const delay = Math.min(Math.max(0, at - this.clock.now()) + 1, MAX_TIMER_MS);
        this.timer = setTimeout(() => {
            this.timer = undefined;
            this.at = Infinity;
            this.wake();
        }, delay);
        this.timer.unref();
    }

    /** Calls every listener now. */
    wake(): void {
        for (const listener of this.listeners) listener();
    }

    clear(): void {
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
        this.at = Infinity;
    }
}
