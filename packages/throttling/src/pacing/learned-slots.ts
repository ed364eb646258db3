/**
 * The slots of one scope's pace learner: how many requests it may have in flight. They grow while
 * every slot is busy and the site shows no queue, shrink to what a queue says the site keeps busy
 * (Gradient2), stop below the requests a concurrency cap refused, and stay within the quota a site
 * last announced. `max` is the policy's slot cap, passed with each change (the policy may change).
 * docs/rampup.md explains the model; times are epoch ms.
 */
import { PACE_GAIN } from './pace-learner-constants';
import { SlotKnee } from './slot-knee';

export class LearnedSlots {
    /** Slots on top of one. */
    extra = 0;
    /** The slots of the last window that saw no queue (persisted; a resumed crawl starts there). */
    safeExtra = 0;
    // Where the slots stop paying, and what quiet windows proved below it.
    private readonly knee = new SlotKnee();
    // Requests the site last announced left in its quota (RateLimit headers); Infinity: none announced.
    private quotaLeft = Number.POSITIVE_INFINITY;

    /** The slots learned, one included. */
    get count(): number {
        return 1 + this.extra;
    }

    /** Slots on top of one in force now: the learned ones, within the quota the site last announced. */
    get allowedExtra(): number {
        return Math.min(this.extra, Math.max(0, this.quotaLeft - 1));
    }

    /** What the proven slots delivered in a quiet window, answers a second (0 before one). */
    get provenDelivered(): number {
        return this.knee.provenDelivered;
    }

    /**
     * The wait after a refusal with `inFlight` in flight that may be a concurrency cap's, ms (0: not
     * one). Beyond the slots a quiet window proved (two or more), before anything sent beyond them was
     * accepted (`SlotKnee.mayBeCap`): a cap refuses only what is beyond it, and at once, so the slots
     * come down to the proven ones and wait one interval of what they delivered. A bucket that ran
     * empty just as the slots grew looks the same: as fast as that, it has a token again by then;
     * slower, the pace is refused again, a little sooner than after a second's wait.
     */
    capWaitMs(inFlight: number): number {
        const delivered = this.knee.provenDelivered * PACE_GAIN;
        return delivered > 0 && this.knee.mayBeCap(inFlight) ? 1000 / delivered : 0;
    }

    /** A dispatch of the current window went out at `now` with `inFlight` in flight, itself included. */
    noteInFlight(now: number, inFlight: number): void {
        this.knee.noteInFlight(now, inFlight);
    }

    /** An accepted answer to a request sent at `sentAt`. */
    noteAccepted(sentAt: number): void {
        this.knee.noteAccepted(sentAt);
    }

    /** A new measuring window starts. */
    newWindow(): void {
        this.knee.newWindow();
    }

    /**
     * A refusal that started a backoff, with `inFlight` in flight (the refused one included). Answers
     * whether more were in flight than a quiet window had: then a concurrency cap may have refused it,
     * and the slots come down below those in flight. The cap is unsure where the refusal may as well
     * be a rate's: the site named a wait (`namedWait`: a cap names none), a request sent beyond the
     * proven slots was accepted first (a cap refuses the first one beyond it), or unpaced with one slot
     * proved (two requests sent together are refused by a burst-1 bucket too).
     */
    onRefusal(now: number, inFlight: number, unpaced: boolean, namedWait: boolean, max: number): boolean {
        const beyondProven = this.knee.isBeyondProven(inFlight);
        const unsure = namedWait || this.knee.acceptedBeyondProven || (unpaced && this.knee.provedOneSlot);
        this.capAt(now, inFlight, unsure, max);
        return beyondProven;
    }

    /** A refusal inside a backoff another one started: the slots come down below those in flight, as at the first. */
    onRefusedInBackoff(now: number, inFlight: number, max: number): void {
        this.capAt(now, inFlight, this.knee.isUnsure, max);
    }

    /** A window's median of `medianMs` against the unloaded `leastMs`: a queue; shrink to the slots it keeps busy. */
    shrinkToQueue(now: number, leastMs: number, medianMs: number, max: number): void {
        this.markKnee(now, Math.max(1, Math.floor((this.count * leastMs) / medianMs)), false, max);
    }

    /**
     * A window without a queue or a refusal, delivering `answersPerSecond`: its slots are safe. When
     * they held the scope back (`slotBound`) under the cap, they grow as far as the knee allows, and
     * true is answered: the window was the slots', and says nothing of the pace. `typicalMs`: a
     * typical answer's time, what each busy slot carries (`SlotKnee.onQuiet`).
     */
    onQuiet(
        now: number,
        answersPerSecond: number,
        slotBound: boolean,
        paced: boolean,
        max: number,
        typicalMs = Number.POSITIVE_INFINITY,
    ): boolean {
        this.safeExtra = this.extra;
        this.knee.onQuiet(now, answersPerSecond, slotBound ? typicalMs : Number.POSITIVE_INFINITY);
        if (!slotBound || this.count >= max) return false;
        this.setCount(this.knee.grow(this.count, paced), max);
        return true;
    }

    /** The site announced `remaining` requests left in its quota: no more slots than that until the next. */
    onQuotaLeft(remaining: number): void {
        if (remaining > 0) this.quotaLeft = remaining;
    }

    /** A refusal with `inFlight` in flight beyond the proven slots, within the slots: a cap below them. */
    private capAt(now: number, inFlight: number, unsure: boolean, max: number): void {
        if (this.knee.isBeyondProven(inFlight) && inFlight <= this.count) this.markKnee(now, inFlight - 1, unsure, max);
    }

    /** The slots where only latency grew, or a refusal came: back below them, not probed for a period. */
    private markKnee(now: number, safeSlots: number, unsure: boolean, max: number): void {
        this.knee.mark(now, safeSlots, unsure);
        this.setCount(Math.min(this.count, safeSlots), max);
    }

    private setCount(n: number, max: number): void {
        this.extra = Math.max(0, Math.min(max, Math.round(n)) - 1);
    }
}
