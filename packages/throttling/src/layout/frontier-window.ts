import type { Request } from '@crawlee/core';

import type { DomainQueue } from '../core/domain-queue';
import type { LockKeeper } from './lock-keeper';

/** The line of a domain with nothing waiting. */
const NO_LINE: readonly Request[] = Object.freeze([]);

/**
 * The shared layout's frontier window: requests taken from `inner` whose domain was not ready, held
 * in memory in one line per domain (kept here, oldest first) while they stay locked, and stored, in
 * `inner`. It is bounded twice: `size` requests in all, so memory does not grow with the frontier
 * (no more are taken from `inner` while it is full), and `perDomain` requests per domain, so one busy
 * domain cannot fill it (its further requests go to a queue of its own).
 */
export class FrontierWindow {
    // Requests held across all lines.
    private held = 0;
    // Each domain's line, oldest first; a domain is here while at least one of its requests waits.
    private readonly linesOf = new Map<DomainQueue, Request[]>();
    // Ids of the requests held, so a second copy of one listed again by `inner` is recognised.
    private readonly ids = new Set<string>();

    constructor(
        readonly size: number,
        readonly perDomain: number,
        private readonly locks: LockKeeper,
    ) {}

    /** Requests waiting in the window. */
    get count(): number {
        return this.held;
    }

    /** The domains with requests waiting here. */
    lines(): IterableIterator<DomainQueue> {
        return this.linesOf.keys();
    }

    /** The requests of `entry`'s domain waiting here, oldest first. */
    line(entry: DomainQueue): readonly Request[] {
        return this.linesOf.get(entry) ?? NO_LINE;
    }

    /** How many requests of `entry`'s domain wait here. */
    waiting(entry: DomainQueue): number {
        return this.linesOf.get(entry)?.length ?? 0;
    }

    /** Every request waiting here, line by line. */
    requests(): Request[] {
        return [...this.linesOf.values()].flat();
    }

    /** Whether a request with this id waits here. */
    holds(id: string): boolean {
        return this.ids.has(id);
    }

    /** No request may be taken from `inner` until one leaves. */
    get full(): boolean {
        return this.held >= this.size;
    }

    /** Whether the window has room for one more request of `entry`'s domain. */
    admits(entry: DomainQueue): boolean {
        return !this.full && this.waiting(entry) < this.perDomain;
    }

    /**
     * Files a request just taken (and locked) from `inner` at the back of its domain's line. Like a
     * queue, the window leaves `DomainQueue.queued` to its callers, who count it as waiting work.
     */
    file(entry: DomainQueue, request: Request): void {
        this.lineOf(entry).push(request);
        this.held += 1;
        if (request.id) this.ids.add(request.id);
        this.locks.track(request, entry);
    }

    /**
     * Takes the head of a domain's line, with when its lock ends; undefined when the line is empty.
     * The caller hands it out (after {@link keepLock}) or {@link putBack}s it.
     */
    take(entry: DomainQueue): { request: Request; lockedUntil: number } | undefined {
        const line = this.linesOf.get(entry);
        const request = line?.shift();
        if (!request) return undefined;
        this.held -= 1;
        if (request.id) this.ids.delete(request.id);
        if (line!.length === 0) this.linesOf.delete(entry);
        const lockedUntil = this.locks.untrack(request) ?? 0;
        return { request, lockedUntil };
    }

    /** Gives a request leaving the window a full lock time; false when its lock is lost (it must not go out). */
    keepLock(request: Request, lockedUntil: number): Promise<boolean> {
        return this.locks.refresh(request, lockedUntil);
    }

    /** Puts a request that did not go out back at the head of its domain's line, lock and all. */
    putBack(entry: DomainQueue, request: Request, lockedUntil: number): void {
        this.lineOf(entry).unshift(request);
        this.held += 1;
        if (request.id) this.ids.add(request.id);
        this.locks.track(request, entry, lockedUntil);
    }

    /** Drops a request whose lock was lost: it no longer waits here, and `inner` will hand it out again. */
    drop(entry: DomainQueue, request: Request): void {
        const line = this.linesOf.get(entry);
        const at = line ? line.indexOf(request) : -1;
        if (!line || at < 0) return;
        line.splice(at, 1);
        this.held -= 1;
        if (request.id) this.ids.delete(request.id);
        entry.takeQueued();
        if (line.length === 0) this.linesOf.delete(entry);
    }

    /** The line of `entry`'s domain, made when its first request is filed. */
    private lineOf(entry: DomainQueue): Request[] {
        let line = this.linesOf.get(entry);
        if (!line) {
            line = [];
            this.linesOf.set(entry, line);
        }
        return line;
    }

    /** Forgets every line (the queues were dropped). */
    clear(): void {
        for (const [entry, line] of this.linesOf) entry.takeQueued(line.length);
        this.linesOf.clear();
        this.ids.clear();
        this.held = 0;
        this.locks.clear();
    }
}
