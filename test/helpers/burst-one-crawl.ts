/**
 * A pace learner driven directly on a manual timeline (epoch ms) against a burst-1 token bucket written
 * out here: one slot, each request answered after `latencyMs`, a refusal at once with a wait of
 * `waitMs` (`Retry-After: 1`), and every page retried until accepted. The learner is told how many
 * requests are left at each dispatch, as the manager tells it.
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';

export const BUCKET_T0 = 1_780_000_000_000;

export interface Sent {
    at: number;
    refused: boolean;
    /** The pace in force when it was sent. */
    pace: number;
}

export interface BurstOneCrawl {
    /** The bucket's rate, req/s. */
    rate: number;
    latencyMs: number;
    waitMs: number;
}

/** `requests` pages of a burst-1 bucket, told nothing, each retried after a refusal until accepted. */
export function crawlBurstOne(requests: number, o: BurstOneCrawl): Sent[] {
    const learner = new PaceLearner();
    let tokens = 1;
    let filledAt = BUCKET_T0;
    let now = BUCKET_T0;
    const sent: Sent[] = [];
    for (let left = requests; left > 0;) {
        tokens = Math.min(1, tokens + ((now - filledAt) * o.rate) / 1000);
        filledAt = now;
        learner.onDispatch(now, RAMPUP_DEFAULTS, left - 1, 1);
        const pace = learner.rate;
        if (tokens >= 1) {
            tokens -= 1;
            left -= 1;
            sent.push({ at: now, refused: false, pace });
            learner.onAnswer(now + o.latencyMs, now);
            now = Math.max(now + o.latencyMs, now + learner.delayMs());
        } else {
            sent.push({ at: now, refused: true, pace });
            learner.onTrigger(now, RAMPUP_DEFAULTS, o.waitMs, true, 1);
            now += o.waitMs;
        }
    }
    return sent;
}
