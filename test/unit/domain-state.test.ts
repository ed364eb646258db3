import { DomainState } from '../../packages/throttling/src/pacing/domain-state';
import { isReady, readyAt } from '../../packages/throttling/src/pacing/readiness-decision';
import {
    backoffStep,
    MAX_BACKOFF_EXPONENT,
    STALL_DISPATCH_SLACK_MS,
} from '../../packages/throttling/src/pacing/backoff-steps';
import { NUMERIC_FIELDS, restoreState, saveState } from '../../packages/throttling/src/pacing/domain-state-codec';
import { resolvePolicy } from '../../packages/throttling/src/pacing/policy';
import { RAMPUP_DEFAULTS } from '../../packages/throttling/src/pacing/rampup-policy';

const policy = { backoffMinDelayMs: 2_000, backoffMaxDelayMs: 60_000 };
const T0 = 1_000_000;

describe('DomainState: two clocks', () => {
    test('crawl-delay clock is armed on dispatch with max(crawl delay, floor)', () => {
        const s = new DomainState('a.com');
        s.setCrawlDelay(500);
        expect(isReady(s, T0)).toBe(true);
        s.dispatch(T0, 200);
        expect(isReady(s, T0 + 499)).toBe(false);
        expect(isReady(s, T0 + 500)).toBe(true);
        s.dispatch(T0 + 500, 800); // floor above the crawl delay wins
        expect(readyAt(s, T0 + 500)).toBe(T0 + 1_300);
    });

    test('backoff clock and crawl-delay clock are separate: ready only when both passed', () => {
        const s = new DomainState('a.com');
        s.setCrawlDelay(5_000);
        s.dispatch(T0, 0);
        s.recordRateLimit(T0 + 100, undefined, policy); // backoff until T0+2100
        expect(s.backoffUntil).toBe(T0 + 2_100);
        expect(isReady(s, T0 + 2_100)).toBe(false); // crawl delay still running
        expect(isReady(s, T0 + 5_000)).toBe(true);
    });

    test('a dispatch does not look like a running backoff: the next burst still escalates', () => {
        const s = new DomainState('a.com');
        s.recordRateLimit(T0, undefined, policy);
        s.dispatch(T0 + 2_000, 1_000);
        const second = s.recordRateLimit(T0 + 2_050, undefined, policy);
        expect(second.escalated).toBe(true);
        expect(second.waitMs).toBe(4_000);
    });

    test('cancelDispatch gives the window back unless re-armed since', () => {
        const s = new DomainState('a.com');
        const r = s.dispatch(T0, 1_000);
        s.cancelDispatch(r);
        expect(isReady(s, T0)).toBe(true);
        expect(s.dispatched).toBe(0);
    });

    test('crawl delay is replaced by a new value (a re-read robots.txt may lower it); nonsense clears it', () => {
        const s = new DomainState('a.com');
        expect(s.setCrawlDelay(500)).toBe(true);
        expect(s.setCrawlDelay(500)).toBe(false);
        expect(s.setCrawlDelay(100)).toBe(true);
        expect(s.crawlDelayMs).toBe(100);
        expect(s.setCrawlDelay(Number.NaN)).toBe(true);
        expect(s.crawlDelayMs).toBe(0);
    });
});

describe('DomainState: backoff', () => {
    test('exponential: base, then doubled on each escalation', () => {
        const s = new DomainState('a.com');
        const waits: number[] = [];
        let now = T0;
        for (let i = 0; i < 4; i++) {
            const o = s.recordRateLimit(now, undefined, policy);
            waits.push(o.waitMs);
            now = s.backoffUntil; // the retry happens right at the deadline and is refused again
        }
        expect(waits).toEqual([2_000, 4_000, 8_000, 16_000]);
    });

    test('a burst of refusals while the backoff runs escalates once', () => {
        const s = new DomainState('a.com');
        const first = s.recordRateLimit(T0, undefined, policy);
        const burst = [1, 5, 20].map((d) => s.recordRateLimit(T0 + d, undefined, policy));
        expect(first.escalated).toBe(true);
        expect(burst.every((o) => !o.escalated)).toBe(true);
        expect(s.backoff.backoffExponent).toBe(1);
        expect(s.backoffUntil).toBe(T0 + 2_000);
        expect(s.backoff.refusals).toBe(4); // they still count as refusals
    });

    test('Retry-After wait replaces the exponential wait', () => {
        const s = new DomainState('a.com');
        expect(s.recordRateLimit(T0, 7_000, policy).waitMs).toBe(7_000);
        expect(s.backoffUntil).toBe(T0 + 7_000);
    });

    test('Retry-After of 0 or negative falls back to exponential backoff, never "no delay"', () => {
        for (const wait of [0, -5_000]) {
            const s = new DomainState('a.com');
            expect(s.recordRateLimit(T0, wait, policy).waitMs).toBe(2_000);
        }
    });

    test('a cap applies to both sources and says which asked for more', () => {
        const s = new DomainState('a.com');
        const o = s.recordRateLimit(T0, 3_600_000, policy);
        expect(o.waitMs).toBe(60_000);
        expect(o.cappedFrom).toEqual({ source: 'retry-after', requestedMs: 3_600_000 });
        const e = restoreState({ domain: 'b.com', backoffExponent: 10, decayAt: T0 + 10_000_000 })!;
        const oe = e.recordRateLimit(T0, undefined, policy);
        expect(oe.waitMs).toBe(60_000);
        expect(oe.cappedFrom?.source).toBe('exponential');
    });

    test('exponent is capped so the arithmetic stays finite', () => {
        const s = new DomainState('a.com');
        let now = T0;
        for (let i = 0; i < 100; i++) {
            s.recordRateLimit(now, undefined, { backoffMinDelayMs: 1, backoffMaxDelayMs: Number.MAX_SAFE_INTEGER });
            now = s.backoffUntil;
        }
        expect(s.backoff.backoffExponent).toBe(MAX_BACKOFF_EXPONENT);
        expect(Number.isFinite(s.backoffUntil)).toBe(true);
    });

    test('decay: the exponent resets after a quiet period measured from when the domain can be dispatched again', () => {
        const s = new DomainState('a.com');
        s.recordRateLimit(T0, undefined, policy); // backoff 2 s, until T0+2000; decay at T0+4000
        expect(s.backoff.decayAt).toBe(T0 + 4_000);
        // A refusal right after the retry still escalates (decay measured from the backoff end would not have lapsed either).
        expect(s.recordRateLimit(T0 + 3_999, undefined, policy).waitMs).toBe(4_000);
        // After a full quiet period past the new dispatchable time the exponent starts over.
        const quietEnd = s.backoff.decayAt;
        expect(s.backoff.effectiveExponent(quietEnd)).toBe(0);
        expect(s.recordRateLimit(quietEnd, undefined, policy).waitMs).toBe(2_000);
    });

    test('decay counts a longer crawl delay as part of the wait before dispatch', () => {
        const s = new DomainState('a.com');
        s.setCrawlDelay(10_000);
        s.dispatch(T0, 0); // next dispatch T0+10 s
        s.recordRateLimit(T0 + 100, undefined, policy); // backoff to T0+2.1 s, but dispatchable only at T0+10 s
        expect(s.backoff.decayAt).toBe(T0 + 10_000 + 2_000);
        // The retry at T0+10 s refused again: must escalate, not decay.
        expect(s.recordRateLimit(T0 + 10_050, undefined, policy).waitMs).toBe(4_000);
    });
});

describe('a skipped retry', () => {
    const rampupPolicy = { ...policy, rampup: RAMPUP_DEFAULTS };

    test('waits out the step it skips and the next one, with no retry between', () => {
        // The learner's first step of 1 s: retries after 1 and 2 s, then the 4 s step skipped and the 8 s waited.
        expect(backoffStep(3, undefined, rampupPolicy, 1_000).delayMs).toBe(4_000);
        expect(backoffStep(4, undefined, rampupPolicy, 1_000, true).delayMs).toBe(12_000);
    });

    test('never lengthens a wait the server gave', () => {
        expect(backoffStep(4, 3_000, rampupPolicy, 1_000, true).delayMs).toBe(3_000);
    });
});

describe('DomainState: stall accounting', () => {
    test('refusing back to back accumulates the imposed waits', () => {
        const s = new DomainState('a.com');
        let now = T0;
        for (let i = 0; i < 5; i++) {
            s.recordRateLimit(now, undefined, policy);
            now = s.backoffUntil + 100;
        }
        // 2 + 4 + 8 + 16 s of backoff, plus 100 ms of dispatch slack per retry
        expect(s.backoff.stalledForMs(s.backoff.lastRefusalAt)).toBe(30_000 + 400);
    });

    test('idle time between refusals does not count as stalling', () => {
        const s = new DomainState('a.com');
        s.recordRateLimit(T0, undefined, policy);
        s.recordRateLimit(T0 + 3_600_000, undefined, policy); // an hour idle
        expect(s.backoff.stalledForMs(s.backoff.lastRefusalAt)).toBe(2_000 + STALL_DISPATCH_SLACK_MS);
    });

    test('a long crawl delay between refusals does not count as stalling', () => {
        const s = new DomainState('a.com');
        s.setCrawlDelay(600_000);
        let now = T0;
        for (let i = 0; i < 3; i++) {
            s.dispatch(now, 0);
            s.recordRateLimit(now + 50, 1_000, policy);
            now += 600_000;
        }
        expect(s.backoff.stalledForMs(s.backoff.lastRefusalAt)).toBeLessThan(10_000);
    });

    test('the running part of the last imposed wait counts, up to that wait', () => {
        const s = new DomainState('a.com');
        s.recordRateLimit(T0, undefined, policy);
        expect(s.backoff.stalledForMs(T0 + 1_000)).toBe(1_000);
        expect(s.backoff.stalledForMs(T0 + 3_600_000)).toBe(2_000);
    });

    test('a success breaks the run', () => {
        const s = new DomainState('a.com');
        s.recordRateLimit(T0, undefined, policy);
        s.recordRateLimit(T0 + 2_000, undefined, policy);
        expect(s.backoff.stalledForMs(s.backoff.lastRefusalAt)).toBeGreaterThan(0);
        s.recordSuccess();
        expect(s.backoff.stalledForMs(s.backoff.lastRefusalAt)).toBe(0);
        expect(s.backoff.refusingSince).toBe(0);
    });
});

describe('DomainState: persistence shape', () => {
    test('round-trips through JSON', () => {
        const s = new DomainState('a.com');
        s.setCrawlDelay(250);
        s.recordRateLimit(T0, 3_000, policy);
        const back = restoreState(JSON.parse(JSON.stringify(saveState(s))));
        expect(saveState(back!)).toEqual(saveState(s));
    });

    test('rejects wrong shapes', () => {
        expect(restoreState(null)).toBeUndefined();
        expect(restoreState({ domain: '' })).toBeUndefined();
        expect(restoreState({ domain: 'a.com', backoffUntil: 'soon' })).toBeUndefined();
        expect(restoreState({ domain: 'a.com', backoffUntil: -1 })).toBeUndefined();
        // A missing number is 0; one written as null is not a number either.
        expect(restoreState({ domain: 'a.com', backoffUntil: null })).toBeUndefined();
    });

    test('writes every field in the saved order, and a state never refused or limited saves them as 0', () => {
        const s = new DomainState('a.com');
        s.dispatch(T0, 0);
        expect(Object.keys(saveState(s))).toEqual(['domain', ...NUMERIC_FIELDS]);
        const refused = new DomainState('b.com');
        refused.recordRateLimit(T0, 3_000, policy);
        refused.spend(T0, 1, { limit: 5, windowMs: 60_000 });
        refused.noteNetworkError();
        expect(Object.keys(saveState(refused))).toEqual(['domain', ...NUMERIC_FIELDS]);
        expect(saveState(s)).toMatchObject({ backoffUntil: 0, refusals: 0, quotaSpent: 0, consecutiveErrors: 0 });
        expect(saveState(refused)).toMatchObject({
            backoffUntil: T0 + 3_000,
            refusals: 1,
            quotaSpent: 1,
            consecutiveErrors: 1,
        });
    });

    test('keeps the saved key order that records already written have', () => {
        expect(NUMERIC_FIELDS).toEqual([
            'crawlDelayMs',
            'nextDispatchAt',
            'backoffUntil',
            'backoffExponent',
            'lastBackoffMs',
            'decayAt',
            'refusingSince',
            'lastRefusalAt',
            'stallMs',
            'lastImposedMs',
            'penaltyMs',
            'lastTriggerAt',
            'announcedIntervalMs',
            'announcedUntil',
            'quotaWindowStart',
            'quotaSpent',
            'dispatched',
            'refusals',
            'handled',
            'consecutiveErrors',
            'backedOffMs',
            'freeRetries',
        ]);
    });
});

describe('DomainState: answers to requests sent before a refusal', () => {
    // A scope's settings as a user gets them: rampup on.
    const ramping = resolvePolicy({}, {});

    test('do not restart the backoff: the retry after them waits the next step', () => {
        // With a long response time the requests in flight when a burst ran out are answered after its
        // refusal. They left before the site refused and say nothing of whether it takes requests again.
        expect(ramping.rampup).toBeDefined();
        const s = new DomainState('a.com');
        s.dispatch(T0, 0);
        s.dispatch(T0 + 10, 0);
        s.recordRateLimit(T0 + 100, undefined, ramping);
        expect(s.backoff.backoffExponent).toBe(1);
        expect(s.backoff.refusingSince).toBe(T0 + 100);
        s.recordAnswered(T0 + 300, ramping, T0 + 10);
        expect(s.backoff.refusingSince).toBe(T0 + 100);
        // Handled later, it breaks nothing either.
        s.recordSuccess(T0 + 10);
        expect(s.backoff.refusingSince).toBe(T0 + 100);
        s.recordRateLimit(s.backoffUntil + 50, undefined, ramping);
        expect(s.backoff.backoffExponent).toBe(2);
    });

    test('an answer to a request sent after the refusal still ends the run and restarts the backoff', () => {
        const s = new DomainState('a.com');
        s.dispatch(T0, 0);
        s.recordRateLimit(T0 + 100, undefined, ramping);
        const retryAt = s.backoffUntil;
        s.dispatch(retryAt, 0);
        s.recordAnswered(retryAt + 200, ramping, retryAt);
        expect(s.backoff.refusingSince).toBe(0);
        s.recordRateLimit(retryAt + 500, undefined, ramping);
        expect(s.backoff.backoffExponent).toBe(1);
    });
});

describe('DomainState: a pace raised between two dispatches', () => {
    const ramping = resolvePolicy({}, {});
    // A scope paced at 2 req/s that no site has refused yet: a quiet window doubles it.
    const pacedAt2 = () => {
        const s = new DomainState('a.com');
        const learner = s.ramp(ramping.rampup!);
        learner.rate = 2;
        learner.safeRate = 2;
        return s;
    };
    // Sends at `at` and answers 50 ms later (the slot freed); returns what the answer changed.
    const sendAndAnswer = (s: DomainState, at: number, policy = ramping) => {
        const { slot } = s.dispatch(at, 0, policy);
        const sooner = s.recordAnswered(at + 50, policy, at);
        s.release(slot);
        return sooner;
    };

    test('by an answer: the next request leaves an interval of the new pace after the last one', () => {
        const s = pacedAt2();
        expect(sendAndAnswer(s, T0)).toBe(false);
        expect(sendAndAnswer(s, T0 + 495)).toBe(false);
        expect(readyAt(s, T0 + 545, ramping)).toBe(T0 + 995);
        // Its answer closes a quiet window of 1 s: the pace doubles to 4 req/s, and the clock follows.
        expect(sendAndAnswer(s, T0 + 990)).toBe(true);
        expect(s.rampupState!.rate).toBe(4);
        expect(readyAt(s, T0 + 1040, ramping)).toBe(T0 + 1240);
    });

    test('by the dispatch that closes the window: it is spaced at the new pace', () => {
        const s = pacedAt2();
        sendAndAnswer(s, T0);
        sendAndAnswer(s, T0 + 500);
        // Three sent over 1 s with no queue: the window closes at the third and the pace doubles.
        const { slot } = s.dispatch(T0 + 1000, 0, ramping);
        s.release(slot);
        expect(s.rampupState!.rate).toBe(4);
        expect(readyAt(s, T0 + 1000, ramping)).toBe(T0 + 1250);
    });

    test('never under the hard minimums: a robots.txt crawl delay still spaces it', () => {
        const s = pacedAt2();
        s.setCrawlDelay(400);
        const paced = { ...ramping, ignoreRobotsCrawlDelay: false };
        sendAndAnswer(s, T0, paced);
        sendAndAnswer(s, T0 + 500, paced);
        sendAndAnswer(s, T0 + 1000, paced);
        expect(s.rampupState!.rate).toBe(4);
        expect(readyAt(s, T0 + 1050, paced)).toBe(T0 + 1400);
    });
});
