import { applyJitter } from './policy';
import { DEFAULTS } from '../options/defaults';
import type { ResolvedPolicy } from './policy';
import type { BackoffPolicy } from './domain-state-types';

/** What the decay of raised pacing reads of a policy (both the pacing and the backoff policy have it). */
export type DecayPolicy = Partial<
    Pick<ResolvedPolicy, 'backoffFactor' | 'backoffWindowMs' | 'backoffMinDelayMs' | 'delayMs'>
>;

/** Exponent cap: 2^20 × base is far beyond any sane cap, and keeps the arithmetic finite. */
export const MAX_BACKOFF_EXPONENT = 20;

/** The wait one escalation imposes, and what asked for it. */
export interface BackoffStep {
    /** The wait in force, ms: jittered (unless the server gave it) and cut to the maximum. */
    delayMs: number;
    /** What was asked for before the cut, ms. */
    requestedMs: number;
    /** Whether the server gave the wait (`Retry-After`) rather than the exponential step. */
    fromServer: boolean;
}

/**
 * The wait of the escalation to `exponent` (1 for the first): the server's wait when it gave one, or
 * the exponential step. Jitter spreads exponential waits so many workers do not wake together; a
 * server-given wait is a minimum and is only ever lengthened. `learnedFirstMs` is the first step the
 * pace learner asks for (0: none, or no learner); `skipped`: the step before `exponent` was skipped,
 * its wait is waited too, with no retry between.
 */
export function backoffStep(
    exponent: number,
    waitMs: number | undefined,
    policy: BackoffPolicy,
    learnedFirstMs: number,
    skipped = false,
): BackoffStep {
    const factor = policy.backoffFactor ?? 2;
    const firstMs = firstBackoffMs(policy, learnedFirstMs);
    const stepMs = (e: number) => firstMs * factor ** (e - 1);
    const exponentialMs = Math.min(stepMs(exponent) + (skipped ? stepMs(exponent - 1) : 0), Number.MAX_SAFE_INTEGER);
    const fromServer = waitMs !== undefined && waitMs > 0;
    const requestedMs = fromServer ? waitMs : exponentialMs;
    const jittered = fromServer ? requestedMs : applyJitter(requestedMs, policy.jitter, policy.random ?? Math.random);
    return { delayMs: Math.min(jittered, policy.backoffMaxDelayMs), requestedMs, fromServer };
}

/**
 * The first step of exponential backoff. Adaptive pacing asks for its own (`PaceLearner.firstWaitMs`:
 * a bare refusal read as "a little too fast", as a `Retry-After: 1` would say), never more than
 * `baseDelaySecs`; a run of refusals without an answer still doubles from there.
 */
function firstBackoffMs(policy: BackoffPolicy, learnedFirstMs: number): number {
    if (!policy.rampup || !(learnedFirstMs > 0)) return policy.backoffMinDelayMs;
    return Math.min(policy.backoffMinDelayMs, learnedFirstMs);
}

/**
 * How long raised pacing holds before each step down, in intervals of itself: the backoff and two
 * requests at the raised pace with no refusal are what says the site is served again, whatever its
 * rate. A site refused once by bad luck (an arrival a few ms early at a bucket paced just under its
 * rate) is back at its configured pace seconds later, not minutes; a site that keeps refusing is
 * refused again within this many intervals of the last trigger (its backoff is about one), so its
 * pacing keeps growing. `backoffWindowSecs` caps the window, so long raised pacing decays as before.
 */
const QUIET_INTERVALS_PER_STEP = 3;

/**
 * The pacing raised by backoff triggers, `penaltyMs` as set at `lastTriggerAt`, at `now`: it steps
 * down one factor per quiet window (with a configured delay, `QUIET_INTERVALS_PER_STEP` intervals of
 * the pacing in force, at most `backoffWindowMs`), and once below the least backoff the configured
 * pacing takes over again (0).
 */
export function decayedPenalty(penaltyMs: number, lastTriggerAt: number, now: number, policy: DecayPolicy): number {
    if (penaltyMs <= 0) return 0;
    const windowMs = policy.backoffWindowMs ?? DEFAULTS.backoffWindowSecs * 1000;
    const factor = policy.backoffFactor ?? DEFAULTS.backoffFactor;
    const least = Math.max(1, policy.backoffMinDelayMs ?? 0);
    // Only a pace the user set is one the site is known to take: with none, there is nothing to
    // return to quickly, and each step waits the whole window.
    const told = (policy.delayMs ?? 0) > 0;
    let quietMs = Math.max(0, now - lastTriggerAt);
    let pacing = penaltyMs;
    // 64 steps take any pacing below 1 ms unless the factor is 1, which never steps down.
    for (let step = 0; step < 64; step++) {
        const stepMs = told ? Math.min(windowMs, QUIET_INTERVALS_PER_STEP * pacing) : windowMs;
        if (quietMs < stepMs) return pacing;
        quietMs -= stepMs;
        pacing /= factor;
        if (pacing < least) return 0;
    }
    return pacing;
}

/**
 * The pacing after a backoff, from the `current` (decayed) one: raised to at least a server-given
 * wait, or grown by the factor without one (from the least backoff when none), cut to the maximum.
 */
export function raisedPenalty(current: number, serverWaitMs: number | undefined, policy: BackoffPolicy): number {
    const factor = policy.backoffFactor ?? 2;
    const max = policy.backoffMaxDelayMs;
    if (serverWaitMs !== undefined) return Math.max(current, Math.min(serverWaitMs, max));
    return Math.min(current > 0 ? current * factor : policy.backoffMinDelayMs, max);
}

/**
 * Slack allowed between a backoff's end and the next refusal when measuring stall time: the
 * crawler needs a moment to send the next request (pool polling, latency). Gaps longer than the
 * imposed wait plus this slack are idle time or crawl delay and do not count as stalling.
 */
export const STALL_DISPATCH_SLACK_MS = 2_000;

/**
 * The refusing time a refusal at `now` adds to its run: the gap since the last refusal (at
 * `lastRefusalAt`), cut to the wait that refusal imposed plus `STALL_DISPATCH_SLACK_MS`.
 */
export function stallGapMs(now: number, lastRefusalAt: number, lastImposedMs: number): number {
    return Math.min(Math.max(0, now - lastRefusalAt), lastImposedMs + STALL_DISPATCH_SLACK_MS);
}

/**
 * How long a run of refusals has stalled the scope at `now`: the refusing time `stallMs` accumulated
 * up to the last refusal, plus the part of the wait it imposed that has already passed.
 */
export function stalledForMs(stallMs: number, lastRefusalAt: number, lastImposedMs: number, now: number): number {
    return stallMs + Math.min(Math.max(0, now - lastRefusalAt), lastImposedMs);
}
