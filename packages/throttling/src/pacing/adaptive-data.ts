/** What of a scope's adaptive pacing is persisted, and how it is read back. */
import { isCount, storedRate } from './rate-values';

/** The serialisable state of one scope's adaptive pacing. */
export interface AdaptiveData {
    kind: 'adaptive';
    rate: number;
    safeRate: number;
    unsafeRate: number;
    extraConcurrency: number;
    safeExtraConcurrency: number;
}

/** The persisted form of a pacer's bounds (an unbounded rate is stored as -1). */
export function adaptiveData(p: Omit<AdaptiveData, 'kind'>): AdaptiveData {
    const finite = (n: number) => (Number.isFinite(n) ? n : -1);
    return {
        kind: 'adaptive',
        rate: finite(p.rate),
        safeRate: p.safeRate,
        unsafeRate: finite(p.unsafeRate),
        extraConcurrency: p.extraConcurrency,
        safeExtraConcurrency: p.safeExtraConcurrency,
    };
}

/** Persisted bounds read back (known fields only, each checked), or undefined when malformed. */
export function parseAdaptiveData(data: unknown): Omit<AdaptiveData, 'kind'> | undefined {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
    const d = data as Record<string, unknown>;
    if (d.kind !== 'adaptive') return undefined;
    const rate = storedRate(d.rate);
    const unsafeRate = storedRate(d.unsafeRate);
    const { safeRate, extraConcurrency, safeExtraConcurrency } = d;
    if (rate === undefined || unsafeRate === undefined) return undefined;
    if (typeof safeRate !== 'number' || !Number.isFinite(safeRate) || safeRate < 0) return undefined;
    if (!isCount(extraConcurrency) || !isCount(safeExtraConcurrency)) return undefined;
    return { rate, unsafeRate, safeRate, extraConcurrency, safeExtraConcurrency };
}
