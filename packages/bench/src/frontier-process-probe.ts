import type { ThrottlingRequestManager } from 'crawlee-throttling';
import type { RedisDomainClock, RedisStorageClient } from 'crawlee-throttling/redis';

import { CLOCK_METHODS, FrontierProbe, QUEUE_METHODS, type ProbeTallies } from './frontier-probe';

/** What the probe saw in one B8 process. */
export interface FrontierProbeResult {
    tallies: ProbeTallies;
    /** Samples every 100 ms: requests in flight, and requests this process counted as waiting. */
    samples: number;
    meanInFlight: number;
    /** Of the samples, those with a free slot while nothing this process counted was waiting. */
    idleUncounted: number;
    /** Of the samples, those with a free slot while this process counted work waiting. */
    idleCounted: number;
    /** From a request's handout by the throttler to the crawler's pre-navigation hook, ms. */
    handoutToSendMs: { p50: number; p99: number; max: number };
    /** The domains whose pace adaptive pacing set, and what it set. */
    domains: string[];
}

type RequestQueueLike = ReturnType<ThrottlingRequestManager['asRequestQueue']>;

/**
 * The probe of one B8 crawler process: times its storage and clock calls (reserves split by paced
 * and free sites), how long a handed-out request takes to reach the pre-navigation hook, and samples
 * its pool every 100 ms.
 */
export class ProcessProbe {
    private readonly probe = new FrontierProbe();
    // When each request in hand was handed out (performance.now()), by unique key.
    private readonly handedOutAt = new Map<string, number>();
    // Handout-to-hook times of the requests sent so far, ms.
    private readonly handoutToSend: number[] = [];
    // The pool samples.
    private readonly samples: { inFlight: number; counted: number }[] = [];
    private sampler?: NodeJS.Timeout;

    constructor(
        private readonly pacedHosts: readonly string[],
        private readonly maxConcurrency: number,
    ) {}

    storage(client: RedisStorageClient): void {
        const open = client.requestQueue.bind(client);
        client.requestQueue = (id, options) => this.probe.wrap(open(id, options), 'queue', QUEUE_METHODS);
    }

    clock(clock: RedisDomainClock): void {
        this.probe.wrap(clock, 'clock', CLOCK_METHODS);
        const reserve = clock.reserve.bind(clock);
        const paced = this.probe.wrap({ reserve }, 'paced', ['reserve']);
        const free = this.probe.wrap({ reserve: reserve.bind(undefined) }, 'free', ['reserve']);
        clock.reserve = (key, now, nextAt) => (this.pacedHosts.includes(key) ? paced : free).reserve(key, now, nextAt);
    }

    queue(queue: RequestQueueLike): void {
        this.probe.wrap(queue, 'throttler', ['fetchNextRequest', 'isEmpty', 'isFinished']);
        const fetch = queue.fetchNextRequest.bind(queue);
        queue.fetchNextRequest = (async () => {
            const request = await fetch();
            if (request) this.handedOutAt.set(request.uniqueKey, performance.now());
            return request;
        }) as typeof queue.fetchNextRequest;
    }

    /** The pre-navigation hook saw `uniqueKey` leave. */
    sent(uniqueKey: string): void {
        const at = this.handedOutAt.get(uniqueKey);
        if (at !== undefined) this.handoutToSend.push(performance.now() - at);
        this.handedOutAt.delete(uniqueKey);
    }

    start(throttler: ThrottlingRequestManager, crawler: { autoscaledPool?: { currentConcurrency: number } }): void {
        this.sampler = setInterval(() => {
            const counted = throttler.snapshot().reduce((t, d) => t + (d.queued ?? 0), 0);
            this.samples.push({ inFlight: crawler.autoscaledPool?.currentConcurrency ?? 0, counted });
        }, 100);
    }

    result(throttler: ThrottlingRequestManager): FrontierProbeResult {
        clearInterval(this.sampler);
        const sorted = [...this.handoutToSend].sort((a, b) => a - b);
        const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
        const idle = this.samples.filter((s) => s.inFlight < this.maxConcurrency);
        return {
            tallies: this.probe.tallies,
            samples: this.samples.length,
            meanInFlight: this.samples.reduce((t, s) => t + s.inFlight, 0) / Math.max(1, this.samples.length),
            idleUncounted: idle.filter((s) => s.counted === 0).length,
            idleCounted: idle.filter((s) => s.counted > 0).length,
            handoutToSendMs: { p50: at(0.5), p99: at(0.99), max: Math.round(sorted.at(-1) ?? 0) },
            domains: throttler
                .snapshot()
                .filter((d) => Number.isFinite(d.rampup?.rate ?? Number.NaN))
                .map((d) => `${d.domain} ${d.rampup!.rate!.toFixed(2)}/s refusals ${d.refusals}`),
        };
    }
}
