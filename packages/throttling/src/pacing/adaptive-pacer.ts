/**
 * Adaptive pacing: learns the rate a site accepts from what it answers, whatever way it refuses.
 *
 * A site that refuses is out of tokens at that moment. So between two refusals (or from a refusal
 * to now) it cannot have accepted more than its rate times the time in between, plus one: the count
 * of accepted answers since an earlier refusal, over the time since, is a sample of the site's rate
 * that a burst allowance cannot inflate (the delivery rate of TCP BBR, measured from a point where the
 * bucket was known empty). The sample is exact while the crawler keeps asking faster than the site
 * refills, and too low when the site sat full and idle (a long `Retry-After`) — so it is combined with
 * the highest pace that lived through a whole window without a refusal.
 *
 * Phases, per scope:
 * - Start: unpaced until the first refusal. A site that never refuses gets more slots while its slots,
 *   not its pace, hold it back (doubling per quiet window, up to `maxConcurrency`).
 * - First refusal: the pace becomes what got through, counted over the time including the wait the
 *   refusal imposed (a burst of a slow site then reads as the slow rate it is).
 * - Afterwards: a refusal sets the pace just under the best estimate (the delivery sample or the last
 *   quiet pace, whichever is higher but below the refused pace). Quiet windows double the pace while
 *   no refused pace is near (above `convergedRatio` of it), then move half-way to it; near it, the
 *   pace holds and probes upwards only after `probeAfterWindows` quiet windows.
 *
 * Rates are requests per second; all times epoch ms. Decisions take `now` and read no clock.
 */
import type { RampupPolicy } from './rampup';
import { BackgroundRefusals } from './background-refusals';
import { DeliverySamples } from './delivery-samples';
import type { DeliverySample } from './delivery-samples';
import { clamp } from './rate-values';
import { adaptiveData, parseAdaptiveData } from './adaptive-data';
import type { AdaptiveData } from './adaptive-data';

export type { AdaptiveData } from './adaptive-data';

/** An empty list shared by every pacer: lists here are only ever replaced, never changed in place. */
const NONE: readonly number[] = Object.freeze([]);
/** The pace after a refusal, as a share of the estimate: just under it, so jitter is not refused. */
const CRUISE_GAIN = 0.95;
/** An empty quota while the site delivered less than this share of the pace means the pace is too fast. */
const EXHAUSTED_SHARE = 0.85;
/** What a refusal without a server-given wait is read as, at the start. */
const BARE_REFUSAL_MS = 1_000;
/** A refused pace more than this far above the safe one is far: halve the gap geometrically, quickly. */
const FAR_RATIO = 2;
/** Stop probing when the refused pace is within this ratio of the safe one. */
const CONVERGED_RATIO = 1.1;
/** Converged, probe again only after this many requests (and `reprobeWindows` quiet windows): 1 % refused at most. */
const PROBE_AFTER_REQUESTS = 200;
/** Windows between bounds last this many windows. */
const BRACKET_WINDOWS = 2.5;
/** The pace held once converged, as a share of the proven one. */
const CONVERGED_GAIN = 0.98;
/** How far from the safe towards the refused pace a probe steps. */
const PROBE_STEP = 0.25;
/** Least dispatches in a window before it says anything about the pace. */
const MIN_WINDOW_DISPATCHES = 3;
/** Pace cuts without a quiet window in between, after which refusals are left to the backoff. */
const MAX_CUTS_IN_A_ROW = 2;
/** Fewer requests than this waiting in the scope: no probing upwards (the saving would not pay for a refusal). */
const MIN_BACKLOG_TO_PROBE = 15;
/** Two refusals closer than this say nothing of the refill rate (the second was already in flight). */
const MIN_REFILL_SPAN_MS = 200;
/** Two refusals further apart than this bound nothing worth pacing by (a site down, not a bucket). */
const MAX_REFILL_SPAN_MS = 4_000;
/** A window counts for the pace only when this share of the dispatches the pace allowed went out. */
const PACE_BOUND_SHARE = 0.6;
export class AdaptivePacer implements AdaptiveData {
    readonly kind = 'adaptive';
    /** Current pace, requests per second (Infinity: unpaced, before the first refusal). */
    rate = Number.POSITIVE_INFINITY;
    /** Best estimate of what the site accepts: the pace cruised at; 0 while unknown. */
    safeRate = 0;
    /** The lowest pace refused since the last probe; Infinity when none. */
    unsafeRate = Number.POSITIVE_INFINITY;
    /** The highest pace that lived through a whole window without a refusal; 0 when none. */
    quietRate = 0;
    extraConcurrency = 0;
    safeExtraConcurrency = 0;
    slotBoundInWindow = false;
    private backlog = Number.POSITIVE_INFINITY;
    private windowStart = -1;
    private windowDispatches = 0;
    private quietWindows = 0;
    // Pace cuts since the last quiet window: refusals that outlast two cuts do not follow the pace.
    private cutsInARow = 0;
    // Dispatches since the last refusal (or probe), so probes stay rare in requests as well as time.
    private sinceTrigger = 0;
    // When the first answer came: the first estimate counts from there.
    private firstAnswerAt = -1;
    private answered = 0;
    // Answers before the first refusal of an unpaced start: the most its bucket held (Infinity: unknown).
    private burstSeen = Number.POSITIVE_INFINITY;
    // Points where the site's bucket was known empty, to measure its delivery rate from.
    private readonly samples = new DeliverySamples();
    // Refusals that do not follow the pace: cuts they led to are undone, and they lead to no more.
    private readonly background = new BackgroundRefusals();
    // The last paces that lived through a quiet window, so a refused one falls back to the one before.
    private quietPaces: readonly number[] = NONE;

    /** `initialRate`: a pace to start from instead of unpaced (Infinity). */
    constructor(initialRate = Number.POSITIVE_INFINITY) {
        this.rate = initialRate;
    }

    /** The delay between dispatches asked for, ms (0 while unpaced). */
    delayMs(): number {
        return Number.isFinite(this.rate) ? 1000 / this.rate : 0;
    }

    onDispatch(now: number, policy: RampupPolicy, backlog = Number.POSITIVE_INFINITY): void {
        this.backlog = backlog;
        this.sinceTrigger += 1;
        this.background.onDispatch();
        if (this.windowStart < 0) this.windowStart = now;
        this.windowDispatches += 1;
        this.maybeCloseWindow(now, policy);
    }

    /**
     * An answer that was not a refusal, at `now`, to a request sent at `sentAt` (when known): one sent
     * before a refusal took its token before the bucket ran empty, so it is no delivery since then.
     */
    onAnswer(now = 0, sentAt?: number): void {
        if (this.answered === 0) this.firstAnswerAt = now;
        this.answered += 1;
        if (sentAt !== undefined) this.samples.answeredBefore(sentAt);
    }

    /**
     * A refusal that started a backoff at `now`; `waitMs` is the wait it imposed, `serverGiven` whether
     * the site named it. Refusals of requests already in flight during that wait are not reported (one
     * burst, one lesson).
     */
    onTrigger(now: number, policy: RampupPolicy, waitMs = 0, serverGiven = true, refused = true): void {
        const sample = this.deliverySample(now);
        const last = this.samples.last();
        this.background.onRefusal();
        let emptyBucket = true;
        if (this.answered === (last?.answered ?? 0)) {
            // Refused again with no answer in between: no rate to learn, and the backoff (growing with
            // each such refusal) already holds the scope; a pace cut on top would only hide a stall.
            // But an empty bucket that did not refill one token in that time refills slower than that.
            // Only over a short gap: after long waits (a site refusing everything) it would crush the pace.
            const gap = now - (last?.at ?? now);
            if (gap >= MIN_REFILL_SPAN_MS && gap <= MAX_REFILL_SPAN_MS) this.boundBy(1000 / gap, policy);
        } else if (!Number.isFinite(this.rate)) {
            this.burstSeen = this.answered;
            this.learnFirst(now, policy, sample, serverGiven ? waitMs : 0);
        } else if (this.heldAsBackground()) {
            // Refused about as often at a slower pace: these refusals do not follow the pace, and the
            // bucket was not empty. The backoff still waits what the site asked.
            emptyBucket = false;
        } else if (this.cutsInARow >= MAX_CUTS_IN_A_ROW) {
            // Cut twice and refused again before a quiet window: these refusals do not follow the pace
            // (a site refusing every other request, say). Lowering it further would only decay it.
        } else {
            const { rate, safeRate, unsafeRate, quietPaces } = this;
            this.learnAgain(policy, sample);
            const seen = { pace: this.rate, delivered: sample?.rate ?? 0, waitMs };
            this.background.onCut({ rate, safeRate, unsafeRate, quietPaces }, refused, seen);
            this.cutsInARow += 1;
        }
        // Back to the slots that lived through a quiet window: the pace, not the slots, answers a
        // refusal, and dropping to one slot would starve a slow site whose rate needs several.
        this.extraConcurrency = Math.min(this.extraConcurrency, this.safeExtraConcurrency);
        this.quietWindows = 0;
        this.sinceTrigger = 0;
        this.notePace();
        // A bare refusal's wait beyond the second it is read as is the backoff's, not the site's; a
        // bucket of one token banks none of it, so the sample leaves it out.
        const idleMs = serverGiven || this.burstSeen > 1 ? 0 : Math.max(0, waitMs - BARE_REFUSAL_MS);
        if (emptyBucket) this.addReference(now, waitMs, idleMs);
        this.startWindow(now);
    }

    /**
     * Whether the refusal is held as one that does not follow the pace: the cut before it did not lower
     * the refused share (then undone, the pace held near the refused one, not doubled past it), or it
     * comes no oftener than the background share.
     */
    private heldAsBackground(): boolean {
        const verdict = this.background.judge(this.rate);
        if (verdict.kind === 'held') return true;
        if (verdict.kind === 'undo') {
            const { bounds } = verdict;
            this.rate = bounds.rate;
            this.safeRate = bounds.safeRate;
            this.unsafeRate = Math.min(bounds.unsafeRate, bounds.rate * CONVERGED_RATIO);
            this.quietPaces = bounds.quietPaces;
            this.quietRate = Math.max(0, ...this.quietPaces);
            this.cutsInARow = Math.max(0, this.cutsInARow - 1);
            return true;
        }
        return this.background.isBackground();
    }

    /**
     * The site announced an empty quota (RateLimit headers): its bucket is empty now, as at a refusal,
     * but no pace was refused — a one-token bucket says so after every answer. Unpaced, it starts the
     * pace as a refusal would; paced, it only marks a point to measure from (and a sample may raise
     * the estimate, never lower it).
     */
    onExhausted(now: number, policy: RampupPolicy, waitMs: number): void {
        const sample = this.deliverySample(now);
        // Unpaced, or asking clearly faster than the site delivered: as telling as a refusal.
        if (!Number.isFinite(this.rate) || (sample && sample.rate < this.rate * EXHAUSTED_SHARE)) {
            this.onTrigger(now, policy, waitMs, true, false);
            return;
        }
        if (sample && sample.rate > this.safeRate) {
            this.safeRate = clamp(sample.rate, policy);
            this.rate = Math.max(this.rate, clamp(sample.rate * CRUISE_GAIN, policy));
        }
        this.notePace();
        this.addReference(now, waitMs);
    }

    /**
     * Unpaced until now: the pace becomes what got through, over the time from the first answer (the
     * first page load, a browser's start, is no rate) including the imposed wait. Our own exponential
     * wait says nothing of the site: a bare refusal reads as "one second".
     */
    private learnFirst(now: number, policy: RampupPolicy, sample: DeliverySample | undefined, givenMs: number): void {
        const teachingMs = givenMs > 0 ? givenMs : BARE_REFUSAL_MS;
        const seconds = Math.max(0.001, (now - Math.max(0, this.firstAnswerAt) + teachingMs) / 1000);
        this.safeRate = clamp(Math.max(sample?.rate ?? 0, this.answered / seconds), policy);
        this.rate = this.safeRate;
    }

    /** Refused at a pace: just under the best estimate, the delivery sample or a quiet pace below the refused one. */
    private learnAgain(policy: RampupPolicy, sample: DeliverySample | undefined): void {
        const refused = this.rate;
        // A quiet pace at or above the refused one was a burst allowance hiding the excess.
        const ceiling = Math.min(refused * 0.98, sample?.ceiling ?? Infinity);
        this.quietPaces = this.quietPaces.filter((pace) => pace < ceiling);
        this.quietRate = Math.max(0, ...this.quietPaces);
        const measured = Math.min(sample?.rate ?? 0, refused) * CRUISE_GAIN;
        const estimate = Math.max(measured, this.quietRate) || refused / 2;
        // The sample bounds the rate from above too, unless the site idled full through long waits.
        this.unsafeRate = Math.max(estimate, Math.min(refused, sample?.ceiling ?? refused));
        this.safeRate = clamp(estimate, policy);
        this.rate = this.safeRate;
    }

    /**
     * The site refilled slower than `bound` (requests per second): pace under it. Not kept as a refused
     * pace, since a site refusing for another reason would then hold a crushed pace.
     */
    private boundBy(bound: number, policy: RampupPolicy): void {
        if (this.rate <= bound * CRUISE_GAIN) return;
        this.safeRate = clamp(bound * CRUISE_GAIN, policy);
        this.rate = this.safeRate;
    }

    private maybeCloseWindow(now: number, policy: RampupPolicy): void {
        const paced = Number.isFinite(this.rate);
        // While no pace has been refused yet the search is still far from the rate: shorter windows.
        // Far below any refused pace (or none yet) the search is still far from the rate: quick windows.
        const ratio = this.unsafeRate / Math.max(this.safeRate, 1e-9);
        const growing = ratio > FAR_RATIO;
        const least = growing ? MIN_WINDOW_DISPATCHES - 1 : MIN_WINDOW_DISPATCHES;
        // Between bounds the steps are small, and a small excess drains a burst allowance slowly:
        // such a window must be longer to prove anything.
        const bracketed = !growing && ratio > CONVERGED_RATIO;
        const span = bracketed ? policy.windowMs * BRACKET_WINDOWS : policy.windowMs;
        const windowMs = paced ? Math.max(span, (least * 1000) / this.rate) : policy.windowMs;
        if (now - this.windowStart < windowMs || this.windowDispatches < least) return;
        const allowed = paced ? ((now - this.windowStart) * this.rate) / 1000 : 0;
        const paceBound = paced && this.windowDispatches >= allowed * PACE_BOUND_SHARE;
        if (this.slotBoundInWindow && this.extraConcurrency + 1 < policy.maxConcurrency) {
            // Held by slots (slow answers) and nothing refused: double the slots, as slow start does.
            this.safeExtraConcurrency = this.extraConcurrency;
            this.extraConcurrency = Math.min(policy.maxConcurrency - 1, 2 * this.extraConcurrency + 1);
        } else if (paceBound) {
            this.safeExtraConcurrency = this.extraConcurrency;
            this.onQuietWindow(policy);
            this.notePace();
        }
        this.startWindow(now);
    }

    /** A whole window at the pace without a refusal: the pace is safe; grow or probe. */
    private onQuietWindow(policy: RampupPolicy): void {
        this.cutsInARow = 0;
        this.quietRate = Math.max(this.quietRate, this.rate);
        this.quietPaces = [...this.quietPaces.slice(-7), this.rate];
        this.safeRate = Math.max(this.safeRate, this.rate);
        this.quietWindows += 1;
        if (Number.isFinite(this.unsafeRate) && this.backlog < MIN_BACKLOG_TO_PROBE) {
            // A faster pace would save little on the few requests left, and finding it costs a refusal.
        } else if (!Number.isFinite(this.unsafeRate)) {
            this.rate = clamp(this.rate * 2, policy);
        } else if (this.unsafeRate / this.safeRate > FAR_RATIO) {
            this.rate = clamp(Math.sqrt(this.safeRate * this.unsafeRate), policy);
        } else if (this.unsafeRate / this.safeRate > CONVERGED_RATIO) {
            // A small step: a pace a little too fast drains a burst allowance slowly, so it is
            // refused late, or never in a short crawl.
            this.rate = clamp(this.safeRate + (this.unsafeRate - this.safeRate) * PROBE_STEP, policy);
        } else if (this.quietWindows >= policy.reprobeWindows && this.sinceTrigger >= PROBE_AFTER_REQUESTS) {
            // Rarely and briefly: the refused pace may have been a moment's bad luck or the site grew.
            this.unsafeRate = this.unsafeRate * 1.25;
            this.quietWindows = 0;
            this.sinceTrigger = 0;
            this.rate = clamp(this.safeRate + (this.unsafeRate - this.safeRate) * PROBE_STEP, policy);
        } else {
            // Converged: just under the pace proven quiet, since one exactly at the rate is refused by jitter.
            this.rate = clamp(this.safeRate * CONVERGED_GAIN, policy);
        }
    }

    // ---- Pacing shared with other processes (shared-clock/shared-rate-sync.ts drives these two) ----

    /**
     * Dispatches and accepted answers of the other processes pacing this scope through one shared
     * clock. They count in the windows and delivery samples as this process's own do, so both measure
     * the site, not this process's share of it (which would pin N processes at 1/N of its rate).
     */
    noteOthers(now: number, dispatches: number, answers: number): void {
        if (answers > 0 && this.answered === 0) this.firstAnswerAt = now;
        this.answered += answers;
        this.sinceTrigger += dispatches;
        if (this.windowStart >= 0) this.windowDispatches += dispatches;
    }

    /**
     * A dispatch counted here did not go out after all (another process held the shared clock or
     * slot, the queue was empty): it proves nothing about the pace. Without this, a process asking a
     * shared clock every 100 ms counts each refused attempt and doubles a pace it never sent at.
     */
    undoDispatch(): void {
        this.background.undoDispatch();
        if (this.windowDispatches > 0) this.windowDispatches -= 1;
        if (this.sinceTrigger > 0) this.sinceTrigger -= 1;
    }

    /**
     * Another process sharing this scope's pace set it to `rate`; this one follows. A lower pace was
     * a refusal there: as if refused here at the pace asked for (kept as the refused bound), measured
     * from now. A higher one was a quiet window there: the pace asked for here lived through it too.
     */
    follow(now: number, policy: RampupPolicy, rate: number): void {
        const asked = this.rate;
        const next = clamp(rate, policy);
        this.startWindow(now);
        if (next >= asked) {
            if (Number.isFinite(asked)) {
                this.safeRate = Math.max(this.safeRate, asked);
                this.quietRate = Math.max(this.quietRate, asked);
                this.quietPaces = [...this.quietPaces.slice(-7), asked];
            }
            this.rate = next;
            return;
        }
        this.rate = next;
        this.safeRate = next;
        this.unsafeRate = Math.min(this.unsafeRate, asked);
        this.extraConcurrency = Math.min(this.extraConcurrency, this.safeExtraConcurrency);
        this.quietWindows = 0;
        this.sinceTrigger = 0;
        this.notePace();
        this.addReference(now, 0);
    }

    /** Notes the pace now asked for in every reference, for their ceilings. */
    private notePace(): void {
        this.samples.notePace(this.rate);
    }

    private addReference(now: number, waitMs: number, idleMs = 0): void {
        this.samples.add(now, this.answered, waitMs, this.rate, idleMs);
    }

    /** The delivery sample at `now` (see {@link DeliverySamples.sample}). */
    deliverySample(now: number): DeliverySample | undefined {
        return this.samples.sample(now, this.answered);
    }

    private startWindow(now: number): void {
        this.slotBoundInWindow = false;
        this.windowStart = now;
        this.windowDispatches = 0;
    }

    toJSON(): AdaptiveData {
        return adaptiveData(this);
    }

    /** Rebuilds from persisted data (known fields only, each checked), or undefined when malformed. */
    static fromJSON(data: unknown): AdaptivePacer | undefined {
        const d = parseAdaptiveData(data);
        return d && Object.assign(new AdaptivePacer(), d);
    }
}
