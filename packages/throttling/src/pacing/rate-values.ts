/** A persisted rate: positive with a finite delay (5e-324 has none), or -1 for "unbounded" (JSON has no Infinity). */
export function storedRate(value: unknown): number | undefined {
    if (value === -1) return Number.POSITIVE_INFINITY;
    return typeof value === 'number' && value > 0 && Number.isFinite(value) && Number.isFinite(1000 / value)
        ? value
        : undefined;
}

/** A persisted count: a safe whole number >= 0. */
export function isCount(value: unknown): value is number {
    return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** A rate held within the scope's `minRate` and `maxRate`. */
export function clamp(rate: number, policy: { minRate: number; maxRate: number }): number {
    return Math.min(policy.maxRate, Math.max(policy.minRate, rate));
}
