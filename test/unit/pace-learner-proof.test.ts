/**
 * What a window's accepted requests prove of a bucket's rate, and what a cut keeps of it. The learner
 * is driven directly on a manual timeline (epoch ms) against a token bucket written out here: one slot,
 * each request answered after `LATENCY_MS`, a refusal at once with `Retry-After: 1`, and the backoff's
 * wait before the next request.
 */
import { PaceLearner } from '../../packages/throttling/src/pacing/pace-learner';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';
import { ResponseTimes } from '../../packages/throttling/src/pacing/response-times';
import { RateProof } from '../../packages/throttling/src/pacing/rate-proof';

const POLICY = RAMPUP_DEFAULTS;
const T0 = 1_780_000_000_000;
const LATENCY_MS = 30;
const WAIT_MS = 1_000;

/**
 * The paces the learner was cut to, in order, over `requests` requests to a bucket of `rate` and
 * `burst`: the first pace (from unpaced), the cut that ended doubling, then the probes' cuts.
 */
function cutsAgainst(rate: number, burst: number, requests: number): number[] {
    const learner = new PaceLearner();
    let tokens = burst;
    let filledAt = T0;
    let now = T0;
    const cuts: number[] = [];
    for (let i = 0; i < requests; i++) {
        tokens = Math.min(burst, tokens + ((now - filledAt) * rate) / 1000);
        filledAt = now;
        learner.onDispatch(now, POLICY, 1_000, 1);
        if (tokens >= 1) {
            tokens -= 1;
            learner.onAnswer(now + LATENCY_MS, now);
            now = Math.max(now + LATENCY_MS, now + learner.delayMs());
            continue;
        }
        const before = learner.rate;
        learner.onTrigger(now, POLICY, WAIT_MS, true, 1);
        if (learner.rate < before) cuts.push(learner.rate);
        now += WAIT_MS + learner.delayMs();
    }
    return cuts;
}

describe('what accepted requests prove of the rate', () => {
    test('n requests sent over a span took n tokens: at least (n - burst) / span refilled', () => {
        const times = new ResponseTimes(30_000);
        // Five answers to requests sent 200 ms apart: four intervals of 200 ms, one token there at the start.
        for (let k = 0; k < 5; k++) times.add(T0 + k * 200 + LATENCY_MS, LATENCY_MS, true);
        expect(times.windowProvenRate(1)).toBeCloseTo(5, 6);
        // A bucket that may have held three tokens at the start proves only two over the span.
        expect(times.windowProvenRate(3)).toBeCloseTo(2.5, 6);
        // As many answers as the burst prove nothing.
        expect(times.windowProvenRate(5)).toBe(0);
    });

    test('the last windows together prove it from every process’s answers over their length', () => {
        const proof = new RateProof();
        // Each window alone: 4 answers in 1 s, one of them perhaps the burst: 3 req/s.
        proof.addWindow(4, 1_000, 0, 1, 1_000);
        expect(proof.rate).toBeCloseTo(3, 6);
        // Three such windows together: 11 of 12 answers over 3 s.
        proof.addWindow(4, 1_000, 0, 1, 1_000);
        proof.addWindow(4, 1_000, 0, 1, 1_000);
        expect(proof.rate).toBeCloseTo(11 / 3, 6);
        // What a window's own sends proved stands too, and a refusal spends it all.
        proof.addWindow(1, 1_000, 4.85, 1, 1_000);
        expect(proof.rate).toBeCloseTo(4.85, 6);
        proof.reset();
        expect(proof.rate).toBe(0);
        proof.addWindow(4, 1_000, 0, 4, 1_000);
        expect(proof.rate).toBe(0);
    });

    test('a span shorter than a window proves nothing: other processes’ answers arrive in tallies', () => {
        // Another process's move closed a window 100 ms after it opened, as a tally of 3 answers (sent
        // over the second before) came in: taken over the 100 ms, a bucket of burst 1 refilling 20 req/s.
        // A cut kept that above the pace refused in a 4-process B7 (d) trace, and was refused again.
        const proof = new RateProof();
        proof.addWindow(3, 100, 0, 1, 1_000);
        expect(proof.rate).toBe(0);
        // Over a window's length with the one before, the same answers prove what the span held.
        proof.addWindow(4, 900, 0, 1, 1_000);
        expect(proof.rate).toBeCloseTo(6 / 1.0, 6);
    });
});

describe('a cut after a probe refused above a burst-1 bucket', () => {
    test('keeps the pace quiet windows proved, not the delivery sample the wait held low', () => {
        // 5 req/s, burst 1: doubling is refused at 8 req/s, then a probe step above the site. The delivery
        // sample since the first cut leaves out what the backoff's wait wasted and what the pace under
        // the rate never asked for (3.75 req/s); the window the probe started from proved 4.6.
        const [, doubling, probe] = cutsAgainst(5, 1, 120);
        expect(doubling).toBeLessThan(5);
        expect(probe).toBeGreaterThan(4.2);
        expect(probe).toBeLessThan(5);
    });

    test('a bucket with a burst proves less per window, and the cut stays under the rate', () => {
        const probes = cutsAgainst(5, 4, 200).slice(2);
        expect(probes.length).toBeGreaterThanOrEqual(2);
        for (const cut of probes) expect(cut).toBeLessThan(5);
    });
});
