/**
 * A probe above the pace is worth its refusal only while the requests left gain more time from it than
 * the site's wait costs when it is refused. The learner is driven on a manual timeline against a
 * burst-1 token bucket (test/helpers/burst-one-crawl.ts; answers after `LATENCY_MS`).
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';
import { BUCKET_T0 as T0, crawlBurstOne } from '../helpers/burst-one-crawl';
import type { Sent } from '../helpers/burst-one-crawl';

const POLICY = RAMPUP_DEFAULTS;
const LATENCY_MS = 30;
const WAIT_MS = 1_000;
const RATE = 5;

/** `requests` pages of a 5 req/s burst-1 bucket, each retried after a refusal until accepted. */
function crawl(requests: number): Sent[] {
    return crawlBurstOne(requests, { rate: RATE, latencyMs: LATENCY_MS, waitMs: WAIT_MS });
}

/** Accepted requests per second over the second half of the crawl's time, as B7 reads a steady pace. */
function steadyRate(sent: Sent[]): number {
    const first = sent[0].at;
    const last = sent[sent.length - 1].at;
    const mid = (first + last) / 2;
    const accepted = sent.filter((s) => s.at >= mid && !s.refused).length;
    return (accepted * 1000) / (last - mid);
}

describe('a probe above the pace', () => {
    test('is not sent late in a short crawl, where its refusal costs more than the few left gain', () => {
        // 80 pages: the rate is bracketed within the first half; a probe after that gains the last
        // pages a few per cent each, and its refusal costs a second of 16. Probing on, the second half
        // held a refusal and ran at 84 % of the rate.
        const sent = crawl(80);
        const half = sent.filter((s) => s.at >= (sent[0].at + sent[sent.length - 1].at) / 2);
        expect(half.filter((s) => s.refused)).toHaveLength(0);
        expect(steadyRate(sent)).toBeGreaterThanOrEqual(0.9 * RATE);
    });

    test('is still sent in a long crawl, where the pages left gain from it: the pace ends near the rate', () => {
        const sent = crawl(1_000);
        const late = sent.slice(-200);
        const paces = late.map((s) => s.pace);
        expect(Math.min(...paces)).toBeGreaterThanOrEqual(0.85 * RATE);
        expect(Math.max(...paces)).toBeLessThanOrEqual(1.05 * RATE);
        // Probing went on past the first bracket: more refusals than the short crawl's, few in all.
        const refusals = sent.filter((s) => s.refused).length;
        expect(refusals).toBeGreaterThanOrEqual(4);
        expect(refusals / sent.length).toBeLessThanOrEqual(0.02);
    });

    test.each([
        [1, true],
        [7, false],
    ])('with 20 left under a bound of 8 req/s, a pace of %d steps up: %s', (pace, steps) => {
        // Another process was refused at 8 req/s and cut the shared pace. Far under it, a step saves
        // seconds on 20 pages even if refused a quarter of the time; just under it, a few ms a page.
        const learner = new PaceLearner();
        learner.follow(T0, POLICY, 8);
        learner.follow(T0, POLICY, 7.9);
        learner.follow(T0 + 1, POLICY, pace);
        let now = T0;
        for (let i = 0; i < 4 * pace; i++) {
            now += 1000 / pace;
            learner.onDispatch(now, POLICY, 20, 1);
            learner.onAnswer(now + LATENCY_MS, now);
        }
        expect(learner.rate > pace).toBe(steps);
    });
});
