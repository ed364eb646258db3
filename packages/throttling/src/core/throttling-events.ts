import { EventEmitter } from 'node:events';

/** Why a scope backed off. */
export type BackoffReason = 'refused' | 'network-error' | 'signal';

/** The events a throttler emits, with what each carries (times in ms). */
export interface ThrottlingEvents {
    /** A throttling key was seen for the first time in this crawl; its queue is `queueName`. */
    domainAdded: { domain: string; queueName: string };
    /**
     * A scope started backing off (a burst of refusals counts once): for `waitMs`, the `exponent`-th
     * step in a row; `statusCode` and `retryAfterMs` when a response caused it.
     */
    backoff: {
        domain: string;
        reason: BackoffReason;
        statusCode?: number;
        retryAfterMs?: number;
        waitMs: number;
        exponent: number;
    };
    /** A scope that was refusing answered again, after refusing for `refusingForMs`. */
    recovered: { domain: string; refusingForMs: number; refusals: number };
    /**
     * Adaptive pacing's estimate of what a scope accepts (`rate`, requests per second) moved by 10 % or
     * more since it was last reported (`previousRate`, 0 the first time): after a refusal, or as quiet
     * answers proved a faster pace safe.
     */
    rateLearned: { domain: string; rate: number; previousRate: number; reason: 'refused' | 'answers' };
    /** A scope refused without a break for longer than `maxDomainStallSecs`: the crawl stops. */
    stalled: { domain: string; stalledForMs: number; queued: number };
}

/** A listener of one event. */
export type ThrottlingListener<K extends keyof ThrottlingEvents> = (event: ThrottlingEvents[K]) => void;

/**
 * A typed emitter of {@link ThrottlingEvents}. A listener that throws is logged and does not break
 * the crawl: events report, they never steer.
 */
export class ThrottlingEventEmitter {
    // Node's emitter underneath; typed access only through on/off/emit.
    private readonly emitter = new EventEmitter();

    constructor(private readonly warn: (message: string) => void) {
        // One listener per metric exporter, log sink and test: no leak warning at a handful.
        this.emitter.setMaxListeners(100);
    }

    /** Calls `listener` on every `name` event; returns the unsubscribe. */
    on<K extends keyof ThrottlingEvents>(name: K, listener: ThrottlingListener<K>): () => void {
        this.emitter.on(name, listener);
        return () => this.off(name, listener);
    }

    off<K extends keyof ThrottlingEvents>(name: K, listener: ThrottlingListener<K>): void {
        this.emitter.off(name, listener);
    }

    emit<K extends keyof ThrottlingEvents>(name: K, event: ThrottlingEvents[K]): void {
        if (this.emitter.listenerCount(name) === 0) return;
        for (const listener of this.emitter.listeners(name) as ThrottlingListener<K>[]) {
            try {
                listener(Object.freeze({ ...event }) as ThrottlingEvents[K]);
            } catch (error) {
                this.warn(`A '${name}' listener threw (ignored): ${String(error)}`);
            }
        }
    }
}
