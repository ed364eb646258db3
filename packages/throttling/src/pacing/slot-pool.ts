/**
 * The concurrency slots of one scope: which are in use, and when each may take a request again
 * (the per-slot delay). Process-local: requests in flight in a dead process are not ours to wait for.
 */
export class SlotPool {
    // Slot 0 is kept in fields, the others in arrays made when a second slot is first taken: most keys
    // of a broad crawl only ever use one slot, and two arrays would cost them 100 to 300 bytes each.
    // Earliest next dispatch of slot 0 (per-slot delay); 0 when it may go at once.
    private firstNextAt = 0;
    private firstBusy = false;
    // The same for slots 1 and up (index 0 is slot 1).
    private nextAt?: number[];
    private busy?: boolean[];
    // Slots ever taken (the highest taken, plus one): an unbounded pool looks at one more than these.
    private known = 0;
    // How many slots are busy (kept, not counted, because readiness asks on every poll).
    private busyCount = 0;

    /** Requests holding a slot. */
    get inUse(): number {
        return this.busyCount;
    }

    /** The free slot that can go first (lowest per-slot clock); slot -1 when none is free. */
    free(limit: number): { slot: number; nextAt: number } {
        let best = { slot: -1, nextAt: Number.POSITIVE_INFINITY };
        const bound = Number.isFinite(limit) ? limit : this.known + 1;
        for (let i = 0; i < bound; i++) {
            if (this.isBusy(i)) continue;
            const nextAt = this.clockOf(i);
            if (nextAt < best.nextAt) best = { slot: i, nextAt };
            if (nextAt === 0) break;
        }
        return best;
    }

    /** Takes a slot until `release`; it may take its next request at `nextAt`. Returns its old clock. */
    take(slot: number, nextAt: number): number {
        const previous = this.clockOf(slot);
        if (slot < 0) return previous;
        this.set(slot, true, nextAt);
        this.busyCount += 1;
        this.known = Math.max(this.known, slot + 1);
        return previous;
    }

    /** Frees a slot (its request was handled or reclaimed); false when it was not in use. */
    release(slot: number): boolean {
        if (slot < 0 || !this.isBusy(slot)) return false;
        this.set(slot, false, this.clockOf(slot));
        this.busyCount -= 1;
        return true;
    }

    /** Gives a slot back as if it was never taken (the dispatch went nowhere). */
    untake(slot: number, previousNextAt: number): void {
        if (this.release(slot)) this.set(slot, false, previousNextAt);
    }

    private isBusy(slot: number): boolean {
        return slot === 0 ? this.firstBusy : this.busy?.[slot - 1] === true;
    }

    private clockOf(slot: number): number {
        return slot === 0 ? this.firstNextAt : (this.nextAt?.[slot - 1] ?? 0);
    }

    private set(slot: number, busy: boolean, nextAt: number): void {
        if (slot === 0) {
            this.firstBusy = busy;
            this.firstNextAt = nextAt;
            return;
        }
        const busySlots = (this.busy ??= []);
        const clocks = (this.nextAt ??= []);
        // Filled up to the slot without holes (a holey array is slower and larger).
        while (busySlots.length < slot) {
            busySlots.push(false);
            clocks.push(0);
        }
        busySlots[slot - 1] = busy;
        clocks[slot - 1] = nextAt;
    }
}
