/**
 * The reset of an announced quota, narrowed over a window's answers: headers round the time to the
 * reset up to whole seconds, so the earliest bound any answer of the window gives is the tightest.
 * Times are epoch ms on a manual timeline.
 */
import { QuotaReset } from '../../packages/throttling/src/pacing/quota-reset';

const T0 = 1_780_000_000_000;

describe('QuotaReset', () => {
    test("a one-second window announcing 1 throughout: the reset is the earliest answer's bound", () => {
        const reset = new QuotaReset();
        // The window ends at T0 + 1,000; answers at 100, 500 and 900 ms into it each say "1 s".
        expect(reset.note(T0 + 100, T0 + 90, 9, 1_000)).toBe(T0 + 1_100);
        expect(reset.note(T0 + 500, T0 + 490, 5, 1_000)).toBe(T0 + 1_100);
        // The answer that found it empty holds until then, not a second from itself.
        expect(reset.note(T0 + 900, T0 + 890, 0, 1_000)).toBe(T0 + 1_100);
    });

    test('a new window (more left than last announced) starts narrowing again', () => {
        const reset = new QuotaReset();
        reset.note(T0 + 100, T0 + 90, 1, 1_000);
        expect(reset.note(T0 + 1_200, T0 + 1_190, 9, 1_000)).toBe(T0 + 2_200);
    });

    test('a request sent once the reset passed is in a later window, though it too finds none left', () => {
        // One request a window of 2 s: every answer says 0 left.
        const reset = new QuotaReset();
        expect(reset.note(T0 + 150, T0, 0, 2_000)).toBe(T0 + 2_150);
        expect(reset.note(T0 + 2_300, T0 + 2_150, 0, 2_000)).toBe(T0 + 4_300);
    });

    test('an answer from a window a later request already saw end holds nothing', () => {
        const reset = new QuotaReset();
        reset.note(T0 + 900, T0 + 800, 1, 1_000);
        // A request sent at 1,050 found the new window's quota; one sent at 850 answers later, empty.
        expect(reset.note(T0 + 1_100, T0 + 1_050, 9, 1_000)).toBe(T0 + 2_100);
        expect(reset.note(T0 + 1_150, T0 + 850, 0, 1_000)).toBeUndefined();
    });

    test('after a refusal each answer bounds the reset alone: the site may round it down', () => {
        const reset = new QuotaReset();
        reset.note(T0 + 100, T0 + 90, 9, 1_000);
        reset.refused();
        expect(reset.note(T0 + 900, T0 + 890, 0, 1_000)).toBe(T0 + 1_900);
    });
});
