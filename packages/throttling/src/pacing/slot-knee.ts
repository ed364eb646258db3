/**
 * Where a scope's slots stop paying: the knee (the slot count at which only latency grew, or a
 * refusal came with several requests in flight) and what quiet windows proved below it. A
 * concurrency cap (nginx `limit_conn`) refuses beyond N; a refusal within what a quiet window had in
 * flight cannot be a cap's. Times are epoch ms; decisions take `now`.
 */
import { PERIOD_MS } from './pace-learner-constants';

export class SlotKnee {
    // The slot count at which only latency grew or a refusal came (Infinity: none), and when: not
    // probed again for a period.
    private knee = Number.POSITIVE_INFINITY;
    private kneeAt = 0;
    // The knee came from a refusal of the unpaced start with one slot proved: a burst-1 bucket refuses
    // two requests sent together just as a cap of one does, so once paced it is tried one slot above.
    private unsure = false;
    // The most requests in flight in a quiet window since the last knee: a cap is above them.
    private provenSlots = 0;
    // The most answers a second a quiet window delivered: what the proven slots carry, a cap or not.
    private delivered = 0;
    // The most requests in flight at a dispatch of the current window.
    private windowMostInFlight = 0;
    // When a request first went out beyond the proven slots (-1: none since they were last proven),
    // and whether one sent since was accepted: a cap would have refused it.
    private beyondSince = -1;
    private acceptedBeyond = false;

    /** What the proven slots delivered, answers a second (0 before a quiet window). */
    get provenDelivered(): number {
        return this.delivered;
    }

    /** A dispatch of the current window went out at `now` with `inFlight` in flight, itself included. */
    noteInFlight(now: number, inFlight: number): void {
        this.windowMostInFlight = Math.max(this.windowMostInFlight, inFlight);
        if (this.beyondSince < 0 && this.isBeyondProven(inFlight)) this.beyondSince = now;
    }

    /** An accepted answer to a request sent at `sentAt`. */
    noteAccepted(sentAt: number): void {
        if (this.beyondSince >= 0 && sentAt >= this.beyondSince) this.acceptedBeyond = true;
    }

    /**
     * Whether a refusal with `inFlight` in flight may be a concurrency cap's: more in flight than a
     * quiet window had, and nothing sent beyond those accepted since (a cap refuses the first request
     * beyond it; a bucket that ran empty after the slots grew accepted some first).
     */
    mayBeCap(inFlight: number): boolean {
        return !this.provedOneSlot && this.isBeyondProven(inFlight) && !this.acceptedBeyond;
    }

    /** Whether a request sent beyond the proven slots was accepted since they were last proven. */
    get acceptedBeyondProven(): boolean {
        return this.acceptedBeyond;
    }

    /** A new measuring window starts. */
    newWindow(): void {
        this.windowMostInFlight = 0;
    }

    /** More in flight than any quiet window had: a refusal there may be a cap's. */
    isBeyondProven(inFlight: number): boolean {
        return inFlight > Math.max(1, this.provenSlots);
    }

    /** Whether only one slot was proved (two requests sent together may have met a burst-1 bucket). */
    get provedOneSlot(): boolean {
        return this.provenSlots <= 1;
    }

    /** Whether the knee is one set at the unpaced start and not yet tried again. */
    get isUnsure(): boolean {
        return this.unsure;
    }

    /** The slots where only latency grew, or a refusal came: `safeSlots` below them are the most now. */
    mark(now: number, safeSlots: number, unsure: boolean): void {
        this.knee = safeSlots + 1;
        this.unsure = unsure;
        this.provenSlots = Math.min(this.provenSlots, safeSlots);
        this.kneeAt = now;
        this.resetBeyond();
    }

    /**
     * A quiet window of `answersPerSecond` proved what it had in flight; a knee a period old lapses.
     * Its slots kept busy, each answer `busyAnswerMs` long (Infinity: not kept busy), they carry as
     * many answers in flight each that long (Little's law), when more: a window's count reads low by
     * the time its first answer took to come (behind `limit_conn 2` at 244 ms, 6.6 where two slots
     * carry 8.2 a second).
     */
    onQuiet(now: number, answersPerSecond: number, busyAnswerMs = Number.POSITIVE_INFINITY): void {
        if (this.windowMostInFlight > this.provenSlots) this.resetBeyond();
        this.provenSlots = Math.max(this.provenSlots, this.windowMostInFlight);
        this.delivered = Math.max(this.delivered, answersPerSecond, (this.windowMostInFlight * 1000) / busyAnswerMs);
        if (now - this.kneeAt >= PERIOD_MS) this.knee = Number.POSITIVE_INFINITY;
    }

    private resetBeyond(): void {
        this.beyondSince = -1;
        this.acceptedBeyond = false;
    }

    /**
     * The slots a quiet window the slots held back grows `slots` to: double before any knee, one more
     * after it, never up to it. Paced, an unsure knee is tried one slot above: a refusal there makes
     * it sure, a quiet window says it was the rate's, and the slots grow as before any knee.
     */
    grow(slots: number, paced: boolean): number {
        const next = Number.isFinite(this.knee) ? slots + 1 : slots * 2;
        if (next < this.knee) return next;
        if (!this.unsure || !paced) return slots;
        this.unsure = false;
        this.knee = Number.POSITIVE_INFINITY;
        return slots + 1;
    }
}
