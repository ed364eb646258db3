/**
 * The concurrency slots of one scope: which are in use, and when each may take a request again
 * (the per-slot delay). Process-local: requests in flight in a dead process are not ours to wait for.
 */
export class SlotPool {
    // Earliest next dispatch per slot (per-slot delay); 0 when it may go at once.
    private readonly nextAt: number[] = [];
    // Whether each slot holds a request in flight.
    private readonly busy: boolean[] = [];
    // How many slots are busy (kept, not counted, because readiness asks on every poll).
    private busyCount = 0;

    /** Requests holding a slot. */
    get inUse(): number {
        return this.busyCount;
    }

    /** The free slot that can go first (lowest per-slot clock); slot -1 when none is free. */
    free(limit: number): { slot: number; nextAt: number } {
        let best = { slot: -1, nextAt: Number.POSITIVE_INFINITY };
        const bound = Number.isFinite(limit) ? limit : this.busy.length + 1;
        for (let i = 0; i < bound; i++) {
            if (this.busy[i]) continue;
            const nextAt = this.nextAt[i] ?? 0;
            if (nextAt < best.nextAt) best = { slot: i, nextAt };
            if (nextAt === 0) break;
        }
        return best;
    }

    /** Takes a slot until `release`; it may take its next request at `nextAt`. Returns its old clock. */
    take(slot: number, nextAt: number): number {
        const previous = this.nextAt[slot] ?? 0;
        if (slot < 0) return previous;
        this.busy[slot] = true;
        this.busyCount += 1;
        this.nextAt[slot] = nextAt;
        return previous;
    }

    /** Frees a slot (its request was handled or reclaimed); false when it was not in use. */
    release(slot: number): boolean {
        if (slot < 0 || !this.busy[slot]) return false;
        this.busy[slot] = false;
        this.busyCount -= 1;
        return true;
    }

    /** Gives a slot back as if it was never taken (the dispatch went nowhere). */
    untake(slot: number, previousNextAt: number): void {
        if (this.release(slot)) this.nextAt[slot] = previousNextAt;
    }
}
