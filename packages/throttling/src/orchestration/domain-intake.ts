import type {
    AddRequestsBatchedOptions,
    AddRequestsBatchedResult,
    IRequestManager,
    Request,
    RequestQueueOperationOptions,
    RequestsLike,
    Source,
} from '@crawlee/core';
import type { ProcessedRequest } from '@crawlee/types';

import { ThrottledDomainLimitError } from '../core/errors';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { ThrottlingEventEmitter } from '../core/throttling-events';
import type { IpScopes } from '../ip/ip-scopes';
import type { LayoutStrategy } from '../layout/layout-strategy';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { StatePersister } from '../persistence/state-persister';
import type { OriginGate } from '../robots/origin-gate';
import type { ScopedSource, ScopeRouter } from '../scopes/scope-router';
import type { Scheduler } from '../scheduling/scheduler';
import type { Clock } from '../core/clock';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import type { BatchLanding } from '../queues/batch-landing';
import { movableCopy, movedTo } from '../queues/moved-requests';

/** What the intake works with. */
export interface DomainIntakeDeps {
    options: ResolvedThrottlingOptions;
    clock: Clock;
    router: ScopeRouter;
    registry: DomainRegistry;
    states: DomainStateStore;
    gate: OriginGate;
    persister: StatePersister;
    scheduler: Scheduler;
    events: ThrottlingEventEmitter;
    /** Under throttleBy: 'ip', asked as requests arrive, so their host's address is known before they go. */
    ipScopes?: IpScopes;
    /** Where requests wait: whether they land in `inner`, and what a new key is met with. */
    layout: LayoutStrategy;
    /** Adds batches, the first before answering and the rest in the background. */
    landing: BatchLanding;
    /** Logs a warning (a restored request). */
    warn?: (message: string) => void;
    /** Logs a warning once (a source that cannot be routed by domain). */
    warnOnce?: (message: string) => void;
}

/**
 * Files new requests: each goes to its domain's queue (a new domain is registered, saved before its
 * first request lands, and its origin checked) or to `inner`, and the scheduler learns of the work.
 * Where the layout keeps every new request in `inner` (`'shared'`), a domain is met when its request
 * is fetched from there ({@link target}, the layout opening no queue), and gets a queue of its own
 * only when the frontier window overflows for it ({@link ownQueue}).
 */
export class DomainIntake {
    constructor(private readonly deps: DomainIntakeDeps) {}

    /**
     * The domain queue a request belongs to, opened; undefined for `inner`. When a new domain would
     * exceed `maxThrottledDomains`: throws (`'throw'`) or returns null (`'skip'`).
     */
    async target(
        source: ScopedSource,
        onLimit: 'throw' | 'skip',
        awaitSaved = true,
    ): Promise<DomainQueue | undefined | null> {
        const { registry, states, persister, gate, layout } = this.deps;
        const resolution = onLimit === 'throw' ? registry.resolveOrThrow(source) : registry.resolve(source);
        if (resolution.kind === 'inner') return undefined;
        if (resolution.kind === 'overLimit') return null;
        const { entry } = resolution;
        if (resolution.created) {
            states.update(entry.key, () => undefined);
            this.deps.events.emit('domainAdded', { domain: entry.key, queueName: entry.queueName });
            layout.met(entry, this.deps.clock.now(), persister);
        }
        gate.checkIfDue(entry, source.url);
        this.deps.ipScopes?.scopeOf(source.url, this.deps.clock.now());
        const opening = layout.arrive(entry);
        if (opening) await opening;
        if (awaitSaved && entry.saved) await entry.saved;
        return entry;
    }

    /**
     * Opens the key's own queue for requests the frontier window has no room for, saving the key
     * first (as a new domain's is under `'perDomain'`), so a resumed run reopens it. A key whose queue
     * is open already (every key under `'perDomain'`) is left as it is.
     */
    async ownQueue(entry: DomainQueue): Promise<void> {
        const { registry, persister } = this.deps;
        if (entry.opened) return;
        const first = !entry.opening;
        const opening = registry.open(entry);
        if (first && persister.storagePersists()) entry.saved = persister.save();
        await opening;
        if (entry.saved) await entry.saved;
    }

    /**
     * On local storage, under a layout that moves requests out of `inner` (`'shared'`): requests
     * `inner` answered as already handled that it had moved to their own queue are added there again,
     * in case a kill emptied that copy's file (see moved-requests.ts); the storage dedupes the rest. Each such request costs a read of `inner`
     * (a file read on local storage), so none is made before any key has a queue of its own: until
     * then nothing can have been moved. A failed read skips the request; a failed re-add throws.
     */
    private async restoreMoved(inner: IRequestManager, processed: readonly ProcessedRequest[]): Promise<void> {
        const reader = inner as IRequestManager & { getRequest?: (id: string) => Promise<Request | null> };
        const { registry } = this.deps;
        if (!registry.innerOnLocalDisk || !registry.keyQueueOpened || typeof reader.getRequest !== 'function') return;
        for (const { requestId, wasAlreadyHandled } of processed) {
            if (!wasAlreadyHandled) continue;
            const stored = await reader.getRequest(requestId).catch(() => null);
            const key = movedTo(stored);
            if (!stored || key === undefined) continue;
            const entry = await this.target(stored as ScopedSource, 'skip').catch(() => undefined);
            if (!entry || entry.key !== key) continue;
            await this.ownQueue(entry);
            const info = await entry.queue.addRequest(movableCopy(stored));
            if (info.wasAlreadyPresent) continue;
            this.noteAdded(entry, 1);
            this.deps.warn?.(
                `${key}: ${stored.url} had been moved to its queue and is missing there (its file lost to a kill); added again.`,
            );
        }
    }

    /** Counts new work in a domain queue and makes sure the domain is scheduled. */
    noteAdded(entry: DomainQueue, count: number): void {
        if (count <= 0) return;
        entry.addQueued(count);
        this.deps.scheduler.touch(entry, this.deps.clock.now());
    }

    async add(requestLike: Source, options?: RequestQueueOperationOptions) {
        this.warnIfUnroutable(requestLike);
        const routed = this.routedAtIntake(requestLike);
        const target = routed ? await this.target(routed, 'throw') : undefined;
        if (!target) {
            const inner = await this.deps.registry.getInner();
            const info = await inner.addRequest(requestLike, options);
            await this.restoreMoved(inner, [info]);
            return info;
        }
        const info = await target.queue.addRequest(requestLike, options);
        if (!info.wasAlreadyPresent) this.noteAdded(target, 1);
        return info;
    }

    async addBatched(requests: RequestsLike, options: BatchedOptions = {}): Promise<AddRequestsBatchedResult> {
        const items: (Source & { url?: string })[] = [];
        for await (const item of requests as AsyncIterable<Source | string>) {
            items.push(typeof item === 'string' ? { url: item } : item);
            this.warnIfUnroutable(item);
        }
        const { maxNewRequests, ...passThrough } = options;
        const batch = new Batch(maxNewRequests, passThrough.waitForAllRequestsToBeAdded ?? false);
        let cursor = 0;
        while (cursor < items.length && batch.budget > 0) {
            // With a budget, send no more than it could admit, so requestsOverLimit is exact.
            const end = maxNewRequests === undefined ? items.length : cursor + batch.budget;
            const chunk = items.slice(cursor, end);
            cursor += chunk.length;
            const groups = await this.groupByTarget(chunk, batch);
            for (const [target, group] of groups) await this.addGroup(target, group, passThrough, batch);
        }
        if (batch.overflow.length) {
            throw new ThrottledDomainLimitError(this.deps.options.maxThrottledDomains, [...new Set(batch.overflow)]);
        }
        const requestsOverLimit = maxNewRequests === undefined ? undefined : items.slice(cursor);
        const rest = Promise.all(batch.later).then((lists) => lists.flat());
        // Each part reports its own failure; the crawler rarely awaits this, so it must not go unhandled.
        rest.catch(() => undefined);
        return {
            addedRequests: batch.added,
            waitForAllRequestsToBeAdded: rest,
            ...(requestsOverLimit ? { requestsOverLimit } : {}),
        } as AddRequestsBatchedResult;
    }

    /** Splits a chunk by destination queue (undefined: `inner`); requests over the domain limit are noted. */
    private async groupByTarget(chunk: (Source & { url?: string })[], batch: Batch) {
        const groups = new Map<DomainQueue | undefined, Source[]>();
        for (const item of chunk) {
            let target: DomainQueue | undefined;
            const routed = this.routedAtIntake(item);
            if (routed) {
                const entry = await this.target(routed, 'skip', false);
                if (entry === null) {
                    batch.overflow.push(this.deps.router.routeOf(routed) ?? routed.url);
                    continue;
                }
                target = entry;
            }
            const group = groups.get(target) ?? [];
            group.push(item);
            groups.set(target, group);
        }
        return groups;
    }

    private async addGroup(
        target: DomainQueue | undefined,
        group: Source[],
        passThrough: Omit<BatchedOptions, 'maxNewRequests'>,
        batch: Batch,
    ): Promise<void> {
        if (target?.saved) await target.saved;
        const queue = target ? target.queue : await this.deps.registry.getInner();
        const { forefront, batchSize, waitBetweenBatchesMillis } = passThrough;
        // Counted as each storage call lands, so readiness never counts a request not yet stored.
        const onAdded = async (processed: ProcessedRequest[]) => {
            if (target) this.noteAdded(target, processed.filter((r) => !r.wasAlreadyPresent).length);
            else await this.restoreMoved(queue, processed);
        };
        const landed = await this.deps.landing.land(
            queue,
            group,
            { forefront, batchSize, waitBetweenBatchesMillis, waitForAll: batch.waitForAll },
            onAdded,
        );
        batch.added.push(...landed.first);
        batch.budget -= landed.first.filter((r) => !r.wasAlreadyPresent).length;
        batch.later.push(landed.rest);
    }

    /**
     * The source as a request to route to its domain's queue now; undefined when it goes to `inner`:
     * the layout keeps new requests there, or its URLs are not known here (`requestsFromUrl`).
     */
    private routedAtIntake(source: Source | string): ScopedSource | undefined {
        const url = typeof source === 'string' ? source : source.url;
        if (url === undefined || hasRequestsFromUrl(source)) return undefined;
        return this.deps.layout.landsInInner(source as ScopedSource) ? undefined : (source as ScopedSource);
    }

    /** Requests a `requestsFromUrl` source expands to are not known here, so they cannot be routed. */
    private warnIfUnroutable(source: Source | string): void {
        if (!hasRequestsFromUrl(source) || !this.throttlesAny()) return;
        this.deps.warnOnce?.(
            'A requestsFromUrl source was added: the URLs it lists are read by the queue, not here, so they go to inner unthrottled. Fetch the list yourself and add its URLs to throttle them by domain.',
        );
    }

    private throttlesAny(): boolean {
        const { options, router } = this.deps;
        return options.domains === 'all' || router.listedDomains.size > 0 || options.scopes.size > 0;
    }
}

/** Crawlee's options of `addRequestsBatched`; `maxNewRequests` is missing from the types of 3.15. */
type BatchedOptions = AddRequestsBatchedOptions & { maxNewRequests?: number };

/** The running totals of one `addRequestsBatched` call. */
class Batch {
    readonly added: ProcessedRequest[] = [];
    readonly later: Promise<ProcessedRequest[]>[] = [];
    readonly overflow: string[] = [];
    budget: number;
    readonly waitForAll: boolean;

    constructor(maxNewRequests: number | undefined, waitForAllRequested: boolean) {
        this.budget = maxNewRequests ?? Infinity;
        this.waitForAll = waitForAllRequested || maxNewRequests !== undefined;
    }
}

function hasRequestsFromUrl(source: Source | string): boolean {
    return typeof source === 'object' && source !== null && 'requestsFromUrl' in source;
}
