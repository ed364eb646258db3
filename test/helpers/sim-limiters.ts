/**
 * The limiters of the pacing simulation, each modelled on what real ones do: token buckets (polite-web's),
 * nginx `limit_req` (with and without `nodelay`) and `limit_conn`, fixed windows with the headers
 * express-rate-limit (draft-8, legacy) or GitHub send, haproxy's sliding `http_req_rate` that counts
 * refused requests too, and servers with W workers and a FIFO queue that slow down under load.
 */
import type { SiteOptions } from '../../packages/polite-web/src';
import { TokenBucket } from '../../packages/polite-web/src/token-bucket';
import { retryAfterValue } from '../../packages/polite-web/src/retry-after';

/** How a simulated site limits its clients. */
export type SimLimiter =
    /** polite-web's token bucket (the site's `rate` and `burst`), refusing as the site's `refusal` says. */
    | { kind: 'bucket' }
    /** nginx `limit_req rate burst [nodelay]`: excess over the burst is refused (503), within it delayed. */
    | { kind: 'limit-req'; rate: number; burst: number; nodelay: boolean }
    /** nginx `limit_conn`: more than `max` requests at once are refused (503). */
    | { kind: 'conn'; max: number }
    /**
     * A fixed window of `limit` requests per `windowMs` (express-rate-limit, GitHub): every request
     * counts, refused ones too; 429 with `Retry-After` = the time to the window's end, and headers.
     */
    | { kind: 'window'; limit: number; windowMs: number; headers: 'draft-8' | 'legacy' | 'github' | 'none' }
    /** haproxy `sc_http_req_rate(period) gt limit`: every request counts, refused ones too; 429, no Retry-After. */
    | { kind: 'sliding'; limit: number; periodMs: number }
    /** No limiter: `workers` workers take `serviceMs` per page from a FIFO queue. */
    | { kind: 'workers'; workers: number; serviceMs: number };

/**
 * A simulated site: polite-web's options (host, rate, burst, latencyMs, refusal) plus
 * - `limiter`: how it limits (default: polite-web's token bucket);
 * - `refuseEvery`: refuse every n-th request whatever the pace (a share no pace avoids);
 * - `refuseAfterLatency`: refusals come after the full latency, as from an application, not an edge;
 * - `changes`: the bucket's rate changes mid-crawl (ms after the start);
 * - `jitterMs`: each answer comes up to this much later, drawn from a fixed sequence (a loaded
 *   machine's event loop: noise in response times that no queue at the site caused);
 * - `lateArrivals`: these requests (1 for the first to arrive) reach the site `byMs` after they were
 *   sent (a slow network path once in a while): the next one, on time, may find a bucket paced
 *   just under its rate not yet refilled, and be refused.
 */
export type SimSite = SiteOptions & {
    limiter?: SimLimiter;
    jitterMs?: number;
    refuseEvery?: number;
    refuseAfterLatency?: boolean;
    changes?: { atMs: number; rate: number }[];
    lateArrivals?: { requests: number[]; byMs: number };
};

/** One answer of a site: when it arrives, refused or not, status and headers. */
export interface SimAnswer {
    doneAt: number;
    refused: boolean;
    status: number;
    headers: Record<string, string>;
}

/** The state of one simulated site's limiter. */
export class SiteModel {
    // Requests accepted and not answered yet (limit_conn counts these).
    active = 0;
    private readonly bucket: TokenBucket;
    // nginx limit_req: the excess over the rate, in requests, and when it was last updated.
    private excess = 0;
    private excessAt = -1;
    // Fixed windows: the current window's start and count.
    private windowStart = -1;
    private windowCount = 0;
    // haproxy: every arrival in the period.
    private recent: number[] = [];
    // Workers: when each is free again.
    private readonly workersFreeAt: number[];
    private arrivals = 0;
    private changeIndex = 0;
    private jitterDraws = 0;

    constructor(
        readonly site: SimSite,
        private readonly start: number,
    ) {
        this.bucket = new TokenBucket(site.rate ?? 1e9, site.rate ? (site.burst ?? 1) : 1e9, start);
        const l = site.limiter;
        this.workersFreeAt = l?.kind === 'workers' ? Array<number>(l.workers).fill(start) : [];
    }

    get latencyMs(): number {
        // A few ms of network even at latency 0, so an unpaced crawl does not send infinitely fast.
        return Math.max(2, this.site.latencyMs ?? 0);
    }

    /** The response time of an answer to a lone request: the site's unloaded one. */
    get unloadedMs(): number {
        const l = this.site.limiter;
        return this.latencyMs + (l?.kind === 'workers' ? l.serviceMs : 0);
    }

    /** The true sustained rate (requests per second), Infinity when only concurrency limits it. */
    get trueRate(): number {
        const l = this.site.limiter ?? { kind: 'bucket' };
        switch (l.kind) {
            case 'bucket':
                return this.site.rate ?? Number.POSITIVE_INFINITY;
            case 'limit-req':
                return l.rate;
            case 'window':
                return (l.limit * 1000) / l.windowMs;
            case 'sliding':
                return (l.limit * 1000) / l.periodMs;
            case 'workers':
                return (l.workers * 1000) / l.serviceMs;
            case 'conn':
                return (l.max * 1000) / this.latencyMs;
        }
    }

    /** A request sent at `sentAt` arrives (at once, unless `lateArrivals` delays it). */
    arrive(sentAt: number): SimAnswer {
        this.arrivals += 1;
        const late = this.site.lateArrivals;
        const now = late?.requests.includes(this.arrivals) ? sentAt + late.byMs : sentAt;
        this.applyChanges(now);
        const answer = this.decide(now);
        if (!answer.refused && this.site.refuseEvery !== undefined && this.arrivals % this.site.refuseEvery === 0)
            return this.refusal(now, 429, { 'Retry-After': '1' });
        if (!answer.refused) this.active += 1;
        return answer;
    }

    /** An accepted request was answered. */
    depart(): void {
        this.active -= 1;
    }

    private applyChanges(now: number): void {
        const changes = this.site.changes ?? [];
        while (this.changeIndex < changes.length && now - this.start >= changes[this.changeIndex].atMs) {
            const b = this.bucket as unknown as { rate: number };
            b.rate = changes[this.changeIndex].rate;
            this.changeIndex += 1;
        }
    }

    private decide(now: number): SimAnswer {
        const l = this.site.limiter ?? { kind: 'bucket' };
        switch (l.kind) {
            case 'bucket':
                return this.fromBucket(now);
            case 'limit-req':
                return this.fromLimitReq(now, l);
            case 'conn':
                return this.active >= l.max ? this.refusal(now, 503, {}) : this.ok(now, 0, {});
            case 'window':
                return this.fromWindow(now, l);
            case 'sliding': {
                this.recent = [...this.recent.filter((t) => now - t < l.periodMs), now];
                return this.recent.length > l.limit ? this.refusal(now, 429, {}) : this.ok(now, 0, {});
            }
            case 'workers': {
                const i = this.workersFreeAt.indexOf(Math.min(...this.workersFreeAt));
                const startAt = Math.max(now + this.latencyMs / 2, this.workersFreeAt[i]);
                this.workersFreeAt[i] = startAt + l.serviceMs;
                return { doneAt: startAt + l.serviceMs + this.latencyMs / 2, refused: false, status: 200, headers: {} };
            }
        }
    }

    private fromBucket(now: number): SimAnswer {
        const refusal = { status: 429, retryAfter: 'seconds', ...this.site.refusal } as const;
        if (this.bucket.tryTake(now)) return this.ok(now, 0, {});
        const headers: Record<string, string> = {};
        const retryAfter = retryAfterValue(refusal.retryAfter, this.bucket.msUntilToken(now), now);
        if (retryAfter !== undefined) headers['Retry-After'] = retryAfter;
        return this.refusal(now, refusal.status, headers);
    }

    /** nginx's leaky bucket: excess += 1 − rate × elapsed (never below 0); over the burst refused; else delayed excess / rate. */
    private fromLimitReq(now: number, l: { rate: number; burst: number; nodelay: boolean }): SimAnswer {
        const excess = this.excessAt < 0 ? 0 : Math.max(0, this.excess - (l.rate * (now - this.excessAt)) / 1000 + 1);
        if (excess > l.burst) return this.refusal(now, 503, {});
        this.excess = excess;
        this.excessAt = now;
        return this.ok(now, l.nodelay ? 0 : (excess * 1000) / l.rate, {});
    }

    private fromWindow(now: number, l: { limit: number; windowMs: number; headers: string }): SimAnswer {
        const start = Math.floor((now - this.start) / l.windowMs) * l.windowMs + this.start;
        if (start !== this.windowStart) {
            this.windowStart = start;
            this.windowCount = 0;
        }
        this.windowCount += 1;
        const resetMs = start + l.windowMs - now;
        const remaining = Math.max(0, l.limit - this.windowCount);
        const headers = windowHeaders(l, remaining, resetMs, now);
        if (this.windowCount <= l.limit) return this.ok(now, 0, headers);
        return this.refusal(now, 429, { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(resetMs / 1000))) });
    }

    private ok(now: number, delayMs: number, headers: Record<string, string>): SimAnswer {
        return { doneAt: now + delayMs + this.latencyMs + this.jitter(), refused: false, status: 200, headers };
    }

    /** The next draw of `jitterMs` (a Weyl sequence: spread evenly over [0, jitterMs), the same every run). */
    private jitter(): number {
        if (!this.site.jitterMs) return 0;
        this.jitterDraws += 1;
        return ((this.jitterDraws * 0.618_033_988_75) % 1) * this.site.jitterMs;
    }

    private refusal(now: number, status: number, headers: Record<string, string>): SimAnswer {
        const after = this.site.refuseAfterLatency ? this.latencyMs : 1;
        return { doneAt: now + after, refused: true, status, headers };
    }
}

/** A fixed window's headers as express-rate-limit (draft-8, legacy) or GitHub send them. */
function windowHeaders(
    l: { limit: number; windowMs: number; headers: string },
    remaining: number,
    resetMs: number,
    now: number,
): Record<string, string> {
    const reset = Math.max(0, Math.ceil(resetMs / 1000));
    const windowSecs = Math.ceil(l.windowMs / 1000);
    switch (l.headers) {
        case 'draft-8': {
            const name = `"${l.limit}-in-${windowSecs}sec"`;
            return {
                'RateLimit-Policy': `${name}; q=${l.limit}; w=${windowSecs}`,
                RateLimit: `${name}; r=${remaining}; t=${reset}`,
            };
        }
        case 'legacy':
            return {
                'RateLimit-Limit': String(l.limit),
                'RateLimit-Remaining': String(remaining),
                'RateLimit-Reset': String(reset),
            };
        case 'github':
            return {
                'X-RateLimit-Limit': String(l.limit),
                'X-RateLimit-Remaining': String(remaining),
                'X-RateLimit-Used': String(l.limit - remaining),
                'X-RateLimit-Reset': String(Math.ceil((now + resetMs) / 1000)),
            };
        default:
            return {};
    }
}

/** What a crawler told each site's limit is given (the oracle): a pace just under it, or its concurrency. */
export function oracleScope(model: SiteModel): { delaySecs?: number; concurrency?: number; rampup: false } {
    const l = model.site.limiter;
    if (l?.kind === 'conn') return { concurrency: l.max, rampup: false };
    if (l?.kind === 'workers') return { concurrency: l.workers, rampup: false };
    const concurrency = Math.max(1, Math.ceil((model.trueRate * model.unloadedMs) / 1000) + 1);
    return { delaySecs: 1 / (0.95 * model.trueRate), concurrency, rampup: false };
}

/**
 * A token-bucket site of B5's family that sends RateLimit headers, as the fixed window the real
 * limiters that send them are (express-rate-limit, GitHub): a bucket announcing "0 left, reset in 1 s"
 * after every request of a burst-1 site is no limiter anyone runs.
 */
export function asRealLimiter(site: SimSite): SimSite {
    const style = site.refusal?.rateLimitHeaders ?? 'none';
    if (style === 'none' || !site.rate) return site;
    const windowSecs = Math.max(1, Math.ceil((site.burst ?? 1) / site.rate));
    const headers = style === 'ietf' ? 'draft-8' : style === 'legacy' ? 'legacy' : 'github';
    const limit = Math.max(1, Math.round(site.rate * windowSecs));
    return { ...site, limiter: { kind: 'window', limit, windowMs: windowSecs * 1000, headers } };
}
