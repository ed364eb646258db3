import type { PaceLearner } from '../pacing/pace-learner';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { ScopeRouter } from '../scopes/scope-router';
import { andThen, outcomeOf } from '../core/maybe-promise';
import type { SharedClockFailures } from './shared-clock-failures';
import type { SharedDomainClock } from '../core/shared-domain-clock';
import type { SharedRate, SharedTally, TallyCounts } from '../core/shared-limit-types';

/** A shared rate learned longer ago than this (an earlier crawl's, in a file that outlived it) is not followed. */
export const FOLLOW_HORIZON_MS = 600_000;

/** A call the store has not answered for this long is given up on, so the next one may go. */
const STALE_CALL_MS = 10_000;

/** Most keys tracked at once; past it the least recently added go (a broad crawl's bound). */
const MAX_KEYS = 10_000;

/** What one key shares with the store, in this process. */
interface KeyShare {
    /** The state's `dispatched` count as of the last tally sent. */
    sentDispatched: number;
    /** Accepted answers here not sent yet. */
    unsentAnswers: number;
    /** This process's counts in the tallies sent so far (the store's totals hold them). */
    own: TallyCounts;
    /** Calls sent that answer the key's totals, and the latest of them whose answer was read. */
    issued: number;
    applied: number;
    /** The other processes' counts as of the latest answer (undefined before the first: a baseline). */
    others?: TallyCounts;
    /** The totals of the latest answer read: totals that drop say the store forgot the key. */
    totals?: TallyCounts;
    /** When the call in flight left (0: none). */
    inFlightSince: number;
    /** Something happened while a call was in flight: send again when it answers. */
    dirty: boolean;
    /** A refusal moved the pace here since the last call. */
    refused: boolean;
    /** A move of this process's pace not yet in the store. */
    offer?: SharedRate;
    /** When the latest rate this process shared or followed was learned: only a later one is followed. */
    rateAt: number;
    /** The pace after that share or follow: a refusal that left it unchanged is nothing to share. */
    rate: number;
}

/**
 * A call that answers a key's totals, as it left: the order it was sent in (an answer older than one
 * already read is stale) and this process's counts the totals then held.
 */
export interface TallyMark {
    readonly seq: number;
    readonly own: TallyCounts;
}

/** What {@link SharedRateSync} works with. */
export interface SharedRateSyncOptions {
    shared: SharedDomainClock | undefined;
    states: DomainStateStore;
    router: ScopeRouter;
    failures: SharedClockFailures;
    /** The clocks of `key` changed (a followed cut re-armed the next dispatch): reschedule and publish. */
    changed(key: string): void;
}

/**
 * One learned rate per key for every process pacing it through a shared clock (adaptive pacing only).
 *
 * Each process's own answers are about 1/N of what the site accepts, so a rate learned from them
 * would pin N processes together at 1/N of the site's rate. So every process adds its dispatches and
 * accepted answers to the key's totals in the store (`tally`, when a request leaves and when an answer
 * comes, one call in flight per key) and feeds the other processes' share of them to its pacer, read
 * from every answer that carries the totals (a tally's, and a reservation's where the clock gives them):
 * windows and delivery samples then count the site's traffic, not this process's share. The pace is
 * one for all, the latest move wins: a refused process offers its cut at once (`shareRate`); a quiet
 * window's growth is offered only once a tally shows no other process moved the pace meanwhile (a
 * growth offered later than a cut would undo it); a pace held just under the proven one is not offered
 * (taken as a cut elsewhere it would ratchet every process down). Every tally answers the pace in
 * force, and a newer one is followed.
 *
 * Nothing here decides a dispatch: a failing or slow store only costs the sharing (one warning, the
 * counts kept for the next call), whatever `onSharedClockError` says, and never holds a request.
 */
export class SharedRateSync {
    private readonly keys = new Map<string, KeyShare>();

    constructor(private readonly options: SharedRateSyncOptions) {}

    /** An answer of `key` the site accepted (its pacer has counted it): count it for every process. */
    accepted(key: string): void {
        const share = this.shareOf(key);
        if (!share) return;
        share.unsentAnswers += 1;
        this.flush(key, share);
    }

    /**
     * A request of `key` went out: the counts go now, so that a refusal of it is measured against
     * every process's answers up to its departure (one call in flight per key).
     */
    departed(key: string): void {
        const share = this.shareOf(key);
        if (share) this.flush(key, share);
    }

    /** A refusal of `key` was applied to its pacer here: a cut of its pace goes to every process now. */
    refused(key: string): void {
        const share = this.shareOf(key);
        if (!share) return;
        share.refused = true;
        this.flush(key, share);
    }

    /** A call that answers the totals of `key` leaves now (undefined: `key` shares no rate). */
    mark(key: string): TallyMark | undefined {
        const share = this.shareOf(key);
        return share && this.markOf(share);
    }

    /** The totals of `key` a call marked by {@link mark} answered: read as a tally's answer is. */
    observe(key: string, mark: TallyMark | undefined, totals: SharedTally | undefined): void {
        const share = mark && totals && this.keys.get(key);
        if (share) this.apply(key, share, mark, totals);
    }

    private markOf(share: KeyShare): TallyMark {
        share.issued += 1;
        return { seq: share.issued, own: { ...share.own } };
    }

    /** Whether `key` shares its rate: an adaptive pacer, beside a store that tallies and shares rates. */
    private shareOf(key: string): KeyShare | undefined {
        const { shared } = this.options;
        if (!shared?.tally || !shared.shareRate || !this.pacerOf(key)) {
            this.keys.delete(key);
            return undefined;
        }
        let share = this.keys.get(key);
        if (!share) {
            // The first tally carries every dispatch so far: they came before the first answer.
            share = {
                ...{ sentDispatched: 0, unsentAnswers: 0, inFlightSince: 0, dirty: false, refused: false },
                ...{ own: { dispatched: 0, answered: 0 }, issued: 0, applied: 0, rateAt: 0, rate: 0 },
            };
            this.keys.set(key, share);
            if (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value!);
        }
        return share;
    }

    private pacerOf(key: string): PaceLearner | undefined {
        if (!this.options.router.policyOf(key).rampup) return undefined;
        return this.options.states.read(key)?.rampupState;
    }

    /** Sends what is pending (a cut, the counts), one call in flight per key. */
    private flush(key: string, share: KeyShare): void {
        const { shared, failures, states } = this.options;
        const now = failures.now();
        if (share.inFlightSince > 0 && now - share.inFlightSince < STALE_CALL_MS) {
            share.dirty = true;
            return;
        }
        share.dirty = false;
        // A pace learned here from a refusal goes to every process at once: a cut is always news.
        const pace = this.pacerOf(key)?.rate ?? Number.NaN;
        if (share.refused && Number.isFinite(pace) && pace !== share.rate) this.claim(share, pace, now);
        share.refused = false;
        this.sendOffer(key, share, now);
        const dispatched = states.read(key)?.dispatched ?? 0;
        // A state made anew (evicted, purged) counts from 0 again.
        if (dispatched < share.sentDispatched) share.sentDispatched = dispatched;
        const add = { dispatched: dispatched - share.sentDispatched, answered: share.unsentAnswers };
        share.sentDispatched = dispatched;
        share.unsentAnswers = 0;
        share.inFlightSince = now;
        share.own = { dispatched: share.own.dispatched + add.dispatched, answered: share.own.answered + add.answered };
        const mark = this.markOf(share);
        void andThen(
            outcomeOf(() => shared!.tally!(key, add, now)),
            (answer) => {
                if (share.inFlightSince === now) share.inFlightSince = 0;
                if (!answer.ok) return this.failed(key, share, add, answer.error);
                this.apply(key, share, mark, answer.value);
                // Only what came meanwhile goes at once; a failed call (an offer kept for later) waits
                // for the next dispatch or answer: a store that fails at once must not spin.
                if (share.dirty) this.flush(key, share);
            },
        );
    }

    /** This process's pace becomes the key's: offered to the store, newer than anything seen so far. */
    private claim(share: KeyShare, rate: number, now: number): void {
        share.offer = { rate, at: now };
        share.rateAt = now;
        share.rate = rate;
    }

    private sendOffer(key: string, share: KeyShare, now: number): void {
        const offer = share.offer;
        share.offer = undefined;
        if (!offer) return;
        this.options.failures.quietly(
            `Could not share the learned rate of ${key}; each process paces it by its own until the store answers again`,
            () => this.options.shared!.shareRate!(key, offer.rate, offer.at, now),
            () => {
                // Sent again with the next tally, unless a newer move replaced it.
                if (share.rateAt === offer.at) share.offer ??= offer;
            },
        );
    }

    /**
     * Feeds the other processes' counts since the last answer to the pacer; then follows a pace another
     * process set since this one last looked, or else shares a pace a quiet window raised here. Only
     * then: a window closed here without knowing of a cut made elsewhere meanwhile, and its growth,
     * shared later than the cut, would undo it.
     */
    private apply(key: string, share: KeyShare, mark: TallyMark, totals: SharedTally): void {
        // Answers may come out of order (a store's calls are not one queue): an older one says less.
        if (mark.seq < share.applied) return;
        share.applied = mark.seq;
        const pacer = this.pacerOf(key);
        const now = this.options.failures.now();
        const before = share.totals;
        share.totals = { dispatched: totals.dispatched, answered: totals.answered };
        // A store that forgot the key (expired, restarted) answers less than before: a new baseline.
        const forgot = before && (totals.dispatched < before.dispatched || totals.answered < before.answered);
        const others = {
            dispatched: totals.dispatched - mark.own.dispatched,
            answered: totals.answered - mark.own.answered,
        };
        const seen = forgot ? undefined : share.others;
        // Counts only grow: less than seen is an answer that left before a tally of ours it could not hold.
        share.others = seen
            ? {
                  dispatched: Math.max(seen.dispatched, others.dispatched),
                  answered: Math.max(seen.answered, others.answered),
              }
            : others;
        if (!pacer) return;
        if (seen)
            pacer.noteOthers(now, share.others.dispatched - seen.dispatched, share.others.answered - seen.answered);
        const rate = totals.rate;
        if (rate && rate.at > share.rateAt && now - rate.at <= FOLLOW_HORIZON_MS) {
            this.follow(key, share, pacer, rate, now);
        } else if (Number.isFinite(pacer.rate) && pacer.rate > share.rate) {
            // A pace held just under the proven one (converged) is not shared: taken as a cut
            // elsewhere, it would ratchet every process down, a step per window.
            this.claim(share, pacer.rate, now);
            this.sendOffer(key, share, now);
        }
    }

    private follow(key: string, share: KeyShare, pacer: PaceLearner, rate: SharedRate, now: number): void {
        share.rateAt = rate.at;
        // Told the pace both last shared: a move to it or above is a raise there, even under one made here.
        const cut =
            rate.rate !== pacer.rate &&
            pacer.follow(now, this.options.router.policyOf(key).rampup!, rate.rate, share.rate);
        share.rate = pacer.rate;
        // A raise: the shared clock already spaces the next dispatch from the last one. Held here for
        // an interval from now, every process that follows would miss the slot when it opens.
        if (!cut) return;
        // A cut: the next dispatch was armed at the faster pace just left; it waits one interval of
        // the new one, as after a refusal here.
        const later = this.options.states.update(key, (s) => s.holdDispatchUntil(now + pacer.delayMs()));
        if (later) this.options.changed(key);
    }

    /** Keeps the counts for the next call; only the sharing is lost meanwhile. */
    private failed(key: string, share: KeyShare, sent: TallyCounts, error: unknown): void {
        share.sentDispatched -= sent.dispatched;
        share.unsentAnswers += sent.answered;
        share.own = {
            dispatched: share.own.dispatched - sent.dispatched,
            answered: share.own.answered - sent.answered,
        };
        this.options.failures.warnOnce(
            `Could not share the learned rate of ${key} (tally: ${String(error)}); each process paces it by its own until the store answers again.`,
        );
    }
}
