/**
 * Slack: a scope that will finish well before the crawl does may send its last requests more slowly
 * than its pace without making the crawl any longer. After a refusal the pace is a guess (the next
 * quiet window proves it, or the next refusal cuts it), and a guess too fast costs a refusal the
 * site did not need to send; spread over the time the crawl still has, those requests cost none.
 * docs/rampup.md, "Slack before the horizon".
 */
import { HORIZON_SHARE, MIN_BACKLOG_TO_PROBE } from './pace-learner-constants';
import type { PacingPolicy } from './domain-state-types';
import { concurrencyLimit, interval } from './readiness-decision';
import type { ScopeReads } from './readiness-decision';

/**
 * The least spacing of a scope's next dispatch at `now`, ms (0: none): its `backlog` requests spread
 * over `HORIZON_SHARE` of the time to `horizonAt`, the epoch ms when the crawl's slowest scope should
 * be done. Only while the pace is a guess (`guessing`) and few requests are left: as few as make
 * probing above a refused pace not worth its refusal (`MIN_BACKLOG_TO_PROBE`). With more left the
 * learner finds the rate, which a long crawl needs, and a pace it proved is never slowed.
 */
export function slackSpacingMs(horizonAt: number, now: number, backlog: number, guessing: boolean): number {
    if (!guessing || backlog <= 0 || backlog >= MIN_BACKLOG_TO_PROBE || !(horizonAt > now)) return 0;
    return ((horizonAt - now) * HORIZON_SHARE) / backlog;
}

/**
 * When a scope with `backlog` requests waiting (the one going out at `now` included) should be done,
 * epoch ms, for the crawl's horizon: the others an interval of its pace apart, or a typical answer
 * over its slots where that is longer, from the end of any backoff. The interval leaves the slack
 * out: a scope spaced by the horizon would otherwise push it out with every backoff of its own, and
 * be spaced further by it. Unpaced and not answered yet, it estimates `now` (nothing known).
 */
export function finishEstimateAt(
    state: ScopeReads,
    policy: PacingPolicy,
    backlog: number,
    now: number,
    floorMs: number,
): number {
    const typicalMs = state.rampupState?.typicalResponseMs ?? Number.POSITIVE_INFINITY;
    const perSlotMs = Number.isFinite(typicalMs) ? typicalMs / concurrencyLimit(state, policy) : 0;
    const eachMs = Math.max(interval(state, now, floorMs, policy).ms, perSlotMs);
    return Math.max(now, state.backoffUntil) + Math.max(0, backlog - 1) * eachMs;
}
