import type { IRequestManager, Source } from '@crawlee/core';
import type { ProcessedRequest } from '@crawlee/types';

/** How one group of requests is added: Crawlee's `addRequestsBatched` options, less the budget. */
export interface LandingOptions {
    forefront?: boolean;
    /** Requests per storage call. @default 1000 */
    batchSize?: number;
    /** Pause between two background calls. @default 1000 */
    waitBetweenBatchesMillis?: number;
    /** Wait for every call before answering. */
    waitForAll: boolean;
}

/** What a landing answers: the first call's results now, the rest when the background calls end. */
export interface Landed {
    first: ProcessedRequest[];
    rest: Promise<ProcessedRequest[]>;
}

/**
 * Adds requests to a queue in calls of `batchSize`: the first one before answering, the others in the
 * background. Crawlee 3's own background batching runs in a promise executor, so a storage error there
 * leaves `waitForAllRequestsToBeAdded` pending forever and surfaces as an unhandled rejection; each
 * call here holds at most one batch, so Crawlee never starts a background loop, and a failure rejects
 * `rest` (with a handler attached, so a caller that never awaits it does not crash the process).
 * While calls remain, {@link landing} is true: readiness must not call the crawl finished.
 */
export class BatchLanding {
    // Background loops still adding, per queue and in all (readiness asks both).
    private readonly running = new Map<IRequestManager, number>();
    private total = 0;

    constructor(private readonly onFailure: (error: Error) => void) {}

    /** Whether any background batch is still being added (to `queue`, when given). */
    landing(queue?: IRequestManager): boolean {
        return queue ? (this.running.get(queue) ?? 0) > 0 : this.total > 0;
    }

    async land(
        queue: IRequestManager,
        items: readonly Source[],
        options: LandingOptions,
        onAdded: (processed: ProcessedRequest[]) => void | Promise<void>,
    ): Promise<Landed> {
        const size = Math.max(1, options.batchSize ?? 1000);
        const pause = options.waitBetweenBatchesMillis ?? 1000;
        const first = await this.call(queue, items.slice(0, size), options, pause);
        await onAdded(first);
        if (items.length <= size) return { first, rest: Promise.resolve([]) };
        this.enter(queue);
        const rest = this.background(queue, items, size, options, pause, onAdded).finally(() => this.leave(queue));
        // Handled here (reported once); a caller that awaits `rest` still sees the rejection.
        rest.catch((error: Error) => this.onFailure(error));
        if (options.waitForAll) return { first: [...first, ...(await rest)], rest: Promise.resolve([]) };
        return { first, rest };
    }

    private async background(
        queue: IRequestManager,
        items: readonly Source[],
        size: number,
        options: LandingOptions,
        pause: number,
        onAdded: (processed: ProcessedRequest[]) => void | Promise<void>,
    ): Promise<ProcessedRequest[]> {
        const added: ProcessedRequest[] = [];
        for (let at = size; at < items.length; at += size) {
            if (pause > 0 && !options.waitForAll) await new Promise((resolve) => setTimeout(resolve, pause));
            const processed = await this.call(queue, items.slice(at, at + size), options, pause);
            await onAdded(processed);
            added.push(...processed);
        }
        return added;
    }

    /** One storage call of at most one batch: Crawlee adds it before answering. */
    private async call(
        queue: IRequestManager,
        chunk: readonly Source[],
        options: LandingOptions,
        pause: number,
    ): Promise<ProcessedRequest[]> {
        if (chunk.length === 0) return [];
        const result = await queue.addRequestsBatched([...chunk], {
            ...(options.forefront === undefined ? {} : { forefront: options.forefront }),
            batchSize: chunk.length,
            waitBetweenBatchesMillis: pause,
            waitForAllRequestsToBeAdded: true,
        });
        return result.addedRequests;
    }

    private enter(queue: IRequestManager): void {
        this.running.set(queue, (this.running.get(queue) ?? 0) + 1);
        this.total += 1;
    }

    private leave(queue: IRequestManager): void {
        const left = (this.running.get(queue) ?? 1) - 1;
        if (left > 0) this.running.set(queue, left);
        else this.running.delete(queue);
        this.total -= 1;
    }
}
