/**
 * The pace learner of one scope: how many requests it may have in flight (slots) and how fast it may
 * send them (pace), learned from the site's answers. docs/rampup.md explains the model.
 *
 * - Slots follow queueing (TCP Vegas, Netflix Gradient2): while every slot is busy and the window's
 *   median response time stays within `LATENCY_TOLERANCE` of the unloaded (least) one, slots double
 *   (after a knee: grow by one); a median beyond it means a queue at the site, and slots shrink to
 *   slots × least ÷ median. The slot count where only latency grew (the knee) is not probed again for
 *   a period (slot-knee.ts). A refusal with more requests in flight than a quiet window had bounds
 *   slots to those below it (a concurrency cap answers 503 beyond N), each refusal of a burst in turn.
 * - Pace starts unpaced. A refusal, an announced empty quota, or a queue at one slot (a limiter that
 *   delays rather than refuses) sets it just under the delivery rate (`PACE_GAIN`, as BBR cruises just
 *   under the bottleneck rate); a cut goes no lower than the slowest token bucket that fits the
 *   answers since an earlier refusal (bucket-fit.ts). Quiet windows double it while no pace was
 *   refused, then step towards the lowest refused pace; that bound is relaxed now and then so a
 *   faster site is found. A queue left standing at the site while the pace spaced the requests is
 *   drained (BBR's drain): the pace drops for a window, then returns to the safe one.
 * - A refusal share that does not fall after a cut says the refusals do not follow the pace: the cut
 *   is undone and that share is not answered by cuts again.
 *
 * Rates are requests per second; times epoch ms. Decisions take `now` and read no clock.
 */
import type { RampupPolicy } from './rampup-policy';
import { DeliveryPoints } from './delivery-points';
import type { DeliverySample } from './delivery-points';
import { parseAdaptiveData } from './adaptive-data';
import { CutTrial } from './cut-trial';
import type { PaceBounds } from './cut-trial';
import { LearnerCounts } from './learner-counts';
import { Lockout } from './lockout';
import type { LockoutReading } from './lockout';
import { PaceLearnerState } from './pace-learner-state';
import { RateProof } from './rate-proof';
import {
    BARE_REFUSAL_MS,
    JITTER_FLOOR_MS,
    LATENCY_TOLERANCE,
    MAX_BACKGROUND_SHARE,
    MEASURING_WAIT_MS,
    MIN_BACKLOG_TO_PROBE,
    MIN_WINDOW_ANSWERS,
    PACE_GAIN,
    PERIOD_MS,
} from './pace-learner-constants';

export class PaceLearner extends PaceLearnerState {
    // Points where the bucket was known empty, to measure the delivery rate from.
    private readonly points = new DeliveryPoints(PERIOD_MS);
    // Requests sent and answers accepted, every process's, and the requests waiting here.
    private readonly counts = new LearnerCounts();
    // When the last refusal came (-1: none yet): the run since it is what a cut then answers.
    private refusedAt = -1;
    // What accepted requests proved of the rate since the last refusal: a cut does not fall below it.
    private readonly proof = new RateProof();
    // Answers before the first signal of the unpaced start: at least the site's burst (Infinity: unknown).
    private burstSeen = Number.POSITIVE_INFINITY;
    // The last cut, judged by the refusals after it (refusals that come whatever the pace do not cut).
    private readonly trial = new CutTrial();
    // The longest wait the site named after a refusal (up to a period): a limiter that remembers this
    // long (a fixed window) lets a shorter window through quiet whatever the pace, so none proves one.
    private memoryMs = 0;
    // Refused retries after a run: the probe that gets through reads what the run was worth over them.
    private readonly lockout = new Lockout();
    // When the first request went out (-1: none yet): the first run is measured from it.
    private firstDispatchAt = -1;
    // When the last request went out (-1: none yet): a raised pace spaces the next from it.
    private lastSentAt = -1;
    // Refused, and no quiet window held by the pace has proved one since the first refusal: the pace is a
    // guess. Once one has, the learner knows the site's rate, later refusals only move it.
    private guessed = false;
    // A quiet window held by the pace has proved it after a refusal.
    private settled = false;

    /** `initialRate`: a pace to start from instead of unpaced (Infinity). */
    constructor(initialRate = Number.POSITIVE_INFINITY) {
        super(initialRate);
    }

    /**
     * A request went out at `now`; `backlog`: requests of the scope still waiting; `inFlight`: its
     * requests in flight, this one included.
     */
    onDispatch(now: number, policy: RampupPolicy, backlog = Number.POSITIVE_INFINITY, inFlight = 1): void {
        this.policy = policy;
        this.counts.dispatch(now, backlog);
        this.pace.bound.noteDispatches(1);
        if (this.firstDispatchAt < 0) this.firstDispatchAt = now;
        this.lastSentAt = now;
        if (this.window.start < 0) this.startWindow(now);
        this.window.count(now, 1, 0);
        this.slots.noteInFlight(now, inFlight);
        this.maybeCloseWindow(now);
    }

    /** When the last request went out, epoch ms (-1: none yet). */
    get lastDispatchAt(): number {
        return this.lastSentAt;
    }

    /** Refused, and no quiet window held by the pace has proved a pace since the first refusal. */
    get paceIsGuess(): boolean {
        return this.guessed;
    }

    /** A dispatch counted did not go out after all (the queue was empty, a shared clock said no). */
    undoDispatch(): void {
        this.counts.undoDispatch();
        this.window.undoDispatch();
        this.pace.bound.noteDispatches(-1);
    }

    /**
     * An accepted answer at `now` to a request sent at `sentAt` (when known): its response time is
     * measured, and one sent before an empty-bucket point took its token before that point. Answers
     * whether it was the probe that ended a lockout, and set the pace from what the lockout read.
     */
    onAnswer(now = 0, sentAt?: number): boolean {
        this.counts.answer(now, sentAt);
        this.window.count(now, 0, 1);
        if (sentAt === undefined) return false;
        this.points.answeredBefore(sentAt);
        this.slots.noteAccepted(sentAt);
        const paced = this.afterLockout(now, this.lockout.end(sentAt, this.counts.siteBacklog));
        this.times.add(now, now - sentAt, sentAt >= this.window.start);
        this.maybeCloseWindow(now);
        return paced;
    }

    /** The request sent at `sentAt` was refused (told before what the refusal teaches). */
    noteRefused(sentAt: number): void {
        this.counts.refused(sentAt);
    }

    /**
     * A refusal that started a backoff at `now`: `waitMs` is the wait it imposed, `serverGiven` whether
     * the site named it, `inFlight` the requests of the scope in flight, the refused one included.
     */
    onTrigger(now: number, policy: RampupPolicy, waitMs = 0, serverGiven = true, inFlight = 0): void {
        this.policy = policy;
        this.pace.refusedAt(this.counts.dispatched);
        const run = this.counts.refusal();
        const runMs = this.refusedAt < 0 ? 0 : now - this.refusedAt;
        this.refusedAt = now;
        this.pace.bound.noteRefusal(waitMs);
        if (serverGiven) this.memoryMs = Math.min(PERIOD_MS, Math.max(this.memoryMs, waitMs));
        // Refused with others in flight, more than a quiet window had: a concurrency cap would refuse
        // beyond those (the slots come down below them). Within what a quiet window had it cannot be a
        // cap's; where it may as well be a rate's, the slots are tried one above once the pace is proved.
        const paced = Number.isFinite(this.rate);
        const named = serverGiven && waitMs > 0;
        const beyondProven = this.slots.onRefusal(now, inFlight, !paced, named, policy.maxConcurrency);
        const last = this.points.last();
        const retry = this.isRetry(run);
        if (retry) this.lockout.retried(now, MEASURING_WAIT_MS, !serverGiven);
        const emptyBucket = retry || this.learnFromRefusal(now, run, runMs, serverGiven ? waitMs : 0, beyondProven);
        // A refusal that does not follow the pace leaves the window as it was: it may still prove the
        // pace, over the time its wait left for sending.
        if (!emptyBucket) {
            this.window.hold(waitMs);
            return;
        }
        this.proof.reset();
        this.guessed = !this.settled;
        this.points.add(now, this.counts.answered, this.rate, waitMs);
        if (!retry) this.lockout.begin(this.points.last(), last?.at ?? this.firstDispatchAt, last?.answered ?? 0);
        // The wait holds every request: the next window starts when it ends, and proves the new pace
        // (a refused retry's, within a lockout, proves nothing).
        this.startWindow(now + waitMs);
        this.window.refused = retry;
    }

    /**
     * A refusal after `run` requests sent since the one before is a retry: refused before any answer,
     * or with no answer since the last refusal and nothing else sent since. Nothing to learn of the rate
     * yet, and the backoff, growing with each such refusal, already holds the scope. A request sent
     * since and not answered yet may have been accepted: refused after it, the pace sent two where the
     * site took at most one.
     */
    private isRetry(run: number): boolean {
        const answeredThen = this.points.last()?.answered ?? 0;
        return this.counts.answered === answeredThen && (this.counts.answered === 0 || run === 1);
    }

    /**
     * What a refusal other than a retry teaches the pace (`givenMs`: the wait the site named, 0 if
     * none). Answers whether it follows the pace (the bucket is empty): otherwise the window stays.
     */
    private learnFromRefusal(now: number, run: number, runMs: number, givenMs: number, beyondProven: boolean): boolean {
        if (!Number.isFinite(this.rate)) {
            // Beyond the proven slots, what they delivered in a quiet window still stands.
            const floor = beyondProven ? this.slots.provenDelivered * PACE_GAIN : 0;
            this.learnFirst(now, givenMs, floor, true);
            return true;
        }
        // Refused at a pace a quiet window proved, only with more in flight than one proved: the slots'
        // doing (now capped below them), not the pace's. Both raised: both step back.
        if (beyondProven && this.rate <= this.safeRate) return false;
        // A relaxed bound's probe refused above the pace held for a period follows the pace, whatever
        // share of requests the site refuses otherwise; else the cut's trial judges.
        const undo = (before: PaceBounds) => Object.assign(this, before);
        const follows =
            this.pace.bound.isRelaxedProbe(this.rate) ||
            this.trial.follows(now, 1 / run, this.rate, this.counts.dispatched, undo);
        // Refused right after a probe step: the pace's doing, unless some share comes whatever the pace.
        const afterProbe = !this.trial.background && this.pace.refusedAfterProbe(this.counts.dispatched, run);
        if (follows) this.cut(now, 1 / run, runMs, afterProbe);
        return follows;
    }

    /**
     * The first backoff step of a refusal that names no wait, with `inFlight` in flight (itself
     * included), ms: read as `Retry-After: 1`, or two intervals of a slow site; one interval of the
     * proven slots where it may be a concurrency cap's (`LearnedSlots.capWaitMs`), at a pace they
     * proved or unpaced.
     */
    firstWaitMs(inFlight: number): number {
        const provenPace = !Number.isFinite(this.rate) || this.rate <= this.safeRate;
        const capMs = provenPace ? this.slots.capWaitMs(inFlight) : 0;
        if (capMs > 0) return Math.min(BARE_REFUSAL_MS, capMs);
        return Math.max(BARE_REFUSAL_MS, this.safeRate > 0 ? 2000 / this.safeRate : 0);
    }

    /**
     * Whether the backoff of a refusal at `now` skips the retry its doubling would send next: the
     * refusal is a retry refused `MEASURING_WAIT_MS` or more after the one before, so the site refills
     * under 0.5 req/s or remembers, and a limiter that remembers would count the next retry too
     * (lockout.ts).
     */
    skipsRetry(now: number): boolean {
        return this.isRetry(this.counts.sinceRefusal) && this.lockout.longGapAt(now, MEASURING_WAIT_MS);
    }

    /**
     * The site announced an empty quota (RateLimit headers): its bucket is empty now, as at a refusal,
     * without one being spent. Unpaced, or paced clearly faster than the site delivered, it sets the
     * pace as a refusal would; otherwise it only marks a point to measure from.
     */
    onExhausted(now: number, policy: RampupPolicy, waitMs: number): void {
        this.policy = policy;
        if (!Number.isFinite(this.rate)) this.learnFirst(now, waitMs);
        else {
            const sample = this.deliverySample(now);
            if (sample !== undefined && sample.rate < this.rate * PACE_GAIN) this.setPace(now, sample.rate, this.rate);
        }
        this.points.add(now, this.counts.answered, this.rate, waitMs);
        // The scope is held until the reset: the next window starts then, as after a refusal's wait.
        this.startWindow(now + waitMs);
    }

    /**
     * The first signal of an unpaced scope: the pace becomes what got through, over the time from the
     * first answer (a first page load is no rate) including the wait imposed (a slow site's burst then
     * reads as the slow rate it is). A bare refusal's wait is our own backoff's: read as one second.
     * A refusal naming a wait of `MEASURING_WAIT_MS` or more measures the rate: it becomes the bound.
     */
    private learnFirst(now: number, givenMs: number, floor = 0, refused = false): void {
        const teachingMs = givenMs > 0 ? givenMs : BARE_REFUSAL_MS;
        const seconds = Math.max(0.001, (now - Math.max(0, this.counts.firstAnswerAt) + teachingMs) / 1000);
        const sample = this.deliverySample(now)?.rate ?? 0;
        this.burstSeen = Math.max(1, this.counts.answered);
        const reading = Math.max(sample, this.counts.answered / seconds);
        if (refused && givenMs >= MEASURING_WAIT_MS) {
            // A long wait the site named: what got through over it is the rate it grants, not a floor
            // to double from (a fixed window grants exactly that, and refuses a doubling at its turn).
            // A rate limiter's wait, too: a concurrency cap names none, so no cap's floor holds.
            this.setPace(now, reading, reading);
            return;
        }
        this.pace.learned(Math.max(reading, floor), this.policy);
        this.points.notePace(this.rate);
        const start = refused ? this.counts.startRate() : undefined;
        if (start !== undefined) this.pace.capDoubling(start);
    }

    /**
     * A probe got through after a lockout. The rate lies between what the run was worth over the time
     * to this probe and over the time to the last refused retry, which the backoff's doubling leaves
     * up to twice apart: paced at their geometric mean (off by at most √2 either way), bounded by the
     * higher, in windows as long as the lockout (a pace above a remembering limiter's rate is refused
     * within its memory).
     */
    private afterLockout(now: number, reading: LockoutReading | undefined): boolean {
        if (reading === undefined || !(reading.rate < this.rate)) return false;
        this.memoryMs = Math.min(PERIOD_MS, Math.max(this.memoryMs, reading.spanMs));
        const middle = Math.sqrt(reading.rate * reading.upper);
        this.setPace(now, middle, Math.max(middle, Math.min(reading.upper, this.rate)));
        return true;
    }

    /**
     * Refused at the pace: just under the delivery rate since the bucket was last empty. On trial
     * unless `afterProbe` (`LearnedPace.refusedAfterProbe`).
     */
    private cut(now: number, share: number, runMs: number, afterProbe: boolean): void {
        const { rate, safeRate, unsafeRate } = this;
        const sample = this.deliverySample(now);
        const delivered = this.trial.deeper ? sample?.lower : sample?.rate;
        // With no delivery to cut to, the refusals still prove the site slower than the fastest bucket that fits them.
        const tooFast = sample === undefined ? this.counts.fastestRate(this.burstSeen + 1) : undefined;
        const proven = Math.max(this.proof.rate, this.counts.fit(this.burstSeen + 1)?.rate ?? 0);
        this.pace.cut(now, delivered, sample?.exact === true, proven, this.policy, tooFast);
        this.points.notePace(this.rate);
        // On trial only when cut under what the site delivered: a bucket then stops refusing.
        const judged = !afterProbe && share < MAX_BACKGROUND_SHARE && sample !== undefined && this.rate <= sample.rate;
        const sure = sample !== undefined && this.rate <= sample.lower;
        const { dispatched } = this.counts;
        this.trial.begin({ rate, safeRate, unsafeRate }, this.rate, share, dispatched, judged, now + runMs, sure);
    }

    /** Paces just under `measured`, with `refused` (a pace the site refused or queued at) as the bound. */
    private setPace(now: number, measured: number, refused: number): void {
        this.pace.measured(now, measured, refused, this.policy);
        this.points.notePace(this.rate);
    }

    private maybeCloseWindow(now: number): void {
        const answers = this.times.windowCount;
        if (!this.window.canJudge(now, Math.max(this.policy.windowMs, this.memoryMs), answers)) return;
        const median = answers >= MIN_WINDOW_ANSWERS ? this.times.windowMedian() : 0;
        const least = Math.max(this.times.minMs, JITTER_FLOOR_MS);
        const queued = median > least * LATENCY_TOLERANCE;
        if (!queued) this.times.keepTypical();
        this.proveWindow(now);
        if (queued && this.slots.count > 1) {
            // A queue at the site: shrink to the slots its unloaded time would keep busy (Gradient2).
            this.slots.shrinkToQueue(now, least, median, this.policy.maxConcurrency);
        } else if (queued && this.window.slotBound) {
            // A queue at one slot that held the scope back (the pace would have sent more): a limiter
            // that delays rather than refuses. Pace under what it delivered. Latency that grew while
            // the pace, not the slot, spaced the requests cost nothing and says nothing of the pace.
            // The spacing of the answers, not their count over the window: the window's first request met
            // no queue and would read the limiter faster than it is.
            const spaced = this.times.windowSpacingRate();
            const delivered = Number.isFinite(spaced) ? spaced : (answers * 1000) / this.window.lengthAt(now);
            if (!(this.rate <= delivered * PACE_GAIN)) this.setPace(now, delivered, Math.min(this.rate, delivered));
        } else if (queued && Number.isFinite(this.rate)) this.pace.drain(median - least, this.policy);
        else if (!queued && !this.window.refused) this.onQuietWindow(now);
        this.startWindow(now);
    }

    /** What the window's accepted requests proved of the rate, kept for the next cut (not after a refusal). */
    private proveWindow(now: number): void {
        if (this.window.refused || this.window.lengthAt(now) <= 0) return;
        // Two requests prove as much as the gap between them arrived at, which jitter moves either way.
        const own = this.times.windowCount >= MIN_WINDOW_ANSWERS ? this.times.windowProvenRate(this.burstSeen) : 0;
        const { windowMs } = this.policy;
        this.proof.addWindow(this.window.answers, this.window.lengthAt(now), own, this.burstSeen, windowMs);
    }

    /** A window without a queue or a refusal: grow the slots while they hold the scope back, else the pace. */
    private onQuietWindow(now: number): void {
        const delivered = (this.times.windowCount * 1000) / Math.max(1, this.window.lengthAt(now));
        const paced = Number.isFinite(this.rate);
        const { slotBound } = this.window;
        const { maxConcurrency } = this.policy;
        if (this.slots.onQuiet(now, delivered, slotBound, paced, maxConcurrency, this.times.typicalMs)) return;
        if (this.pace.endDrain()) return;
        if (!Number.isFinite(this.rate) || !this.window.heldByPace(now, this.rate, PACE_GAIN)) return;
        this.settled = this.refusedAt >= 0;
        this.guessed = false;
        // Twice the run that led to the cut without a refusal: the share fell, the cut followed the pace.
        const { dispatched, siteBacklog } = this.counts;
        this.trial.onQuiet(dispatched);
        // Doubles before any refusal; a cut on trial holds until judged, and a few requests left would
        // not gain what a probe above it costs.
        const probe = !this.trial.open && siteBacklog >= MIN_BACKLOG_TO_PROBE;
        this.pace.onQuiet(now, dispatched, probe, siteBacklog, this.policy);
    }

    /**
     * The delivery rate since the bucket was last known empty, over a window's span at least; beside
     * other processes, up to when their counts last came.
     */
    deliverySample(now: number): DeliverySample | undefined {
        const end = this.counts.sampleEnd(now);
        return this.points.sample(end.at, end.answered, this.policy.windowMs, PACE_GAIN, this.burstSeen);
    }

    // ---- Pacing shared with other processes (shared-clock/shared-rate-sync.ts drives these two) ----

    /**
     * Dispatches and accepted answers of the other processes pacing this scope through one shared
     * clock: they count in windows and delivery samples as this process's own do, so both measure the
     * site, not this process's share of it (which would pin N processes at 1/N of its rate).
     */
    noteOthers(now: number, dispatches: number, answers: number): void {
        this.counts.others(now, dispatches, answers);
        this.pace.bound.noteDispatches(dispatches);
        this.window.count(now, dispatches, answers);
    }

    /**
     * Another process sharing this scope's pace set it to `rate`; this one follows (a lower pace was a
     * refusal there, a higher one a quiet window: `LearnedPace.follow`). `common`: the pace both last
     * shared (0: none). Answers whether the move was a cut (a refusal there).
     */
    follow(now: number, policy: RampupPolicy, rate: number, common = 0): boolean {
        this.policy = policy;
        const unpaced = !Number.isFinite(this.rate);
        this.counts.shared();
        // The window ends here: what it proved still stands for the next cut.
        this.proveWindow(now);
        this.startWindow(now);
        if (!this.pace.follow(now, rate, common, policy)) return false;
        // Unpaced until now: the first signal was another process's, after the answers counted so far.
        if (unpaced) this.burstSeen = Math.min(this.burstSeen, Math.max(1, this.counts.answered));
        // The refusal there came a little earlier, and the wait it imposed on every process is not told
        // here: what is delivered since reads low, and is never taken as the site's rate exactly.
        this.points.add(now, this.counts.answered, 0, 0);
        return true;
    }

    /** Rebuilds from persisted data (known fields only, each checked), or undefined when malformed. */
    static fromJSON(data: unknown): PaceLearner | undefined {
        const d = parseAdaptiveData(data);
        return d && Object.assign(new PaceLearner(), d);
    }
}
