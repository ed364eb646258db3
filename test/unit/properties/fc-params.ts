import type { Parameters } from 'fast-check';

/**
 * Run settings shared by the property tests: bounded runs so the suite stays fast, and a seed that
 * can be pinned (`FC_SEED=<seed from a failure report>`) to replay a failure. fast-check prints
 * the seed, the shrink path and the shrunk counterexample of any failing property.
 */
export function fcParams<T>(numRuns = 300): Parameters<T> {
    const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
    return seed === undefined ? { numRuns } : { numRuns, seed };
}
