import type { FamilyMix } from './family-mixes';
import type { MixResult, MixRun } from './mix-family';

/**
 * What B5's goal lines are judged on: the mixes that ran both the oracle and the throttler, and one
 * line of the goal as the report prints it. Shared by the goal's parts (b5-goals.ts, b5-long-crawls.ts).
 */

export interface GoalLine {
    goal: string;
    measured: string;
    met: boolean;
}

const runOf = (r: MixResult, contender: MixRun['contender']) => r.runs.find((x) => x.contender === contender);

/** A mix the goal can judge: it ran both the oracle and the throttler. */
export interface JudgedMix {
    mix: FamilyMix;
    oracle: MixRun;
    throttler: MixRun;
}

/** The mixes that ran both the oracle and the throttler: the only ones the goal can judge. */
export function pairsOf(results: readonly MixResult[]): JudgedMix[] {
    return results
        .map((r) => ({ mix: r.mix, oracle: runOf(r, 'oracle'), throttler: runOf(r, 'throttler') }))
        .filter((p): p is JudgedMix => !!p.oracle && !!p.throttler);
}

/** `ok` of `all`, as the lines print a count. */
export const count = (ok: unknown[], all: unknown[]) => `${ok.length}/${all.length}`;
