/**
 * Slack: a scope that will finish well before the crawl does may send its last requests more slowly
 * than its pace without making the crawl any longer. After a refusal the pace is a guess (the next
 * quiet window proves it, or the next refusal cuts it), and a guess too fast costs a refusal the
 * site did not need to send; spread over the time the crawl still has, those requests cost none.
 * docs/rampup.md, "Slack before the horizon".
 */
import { HORIZON_SHARE, MIN_BACKLOG_TO_PROBE } from './pace-learner-constants';

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
