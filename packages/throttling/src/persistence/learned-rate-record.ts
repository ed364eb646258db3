/**
 * The record of learned rates in their named key-value store: one entry per scope, with when it was
 * learned. Pure: reading is defensive (a malformed entry is dropped, never thrown), and merging keeps
 * the store bounded in age and size.
 */

/** The key of the record in the store. */
export const LEARNED_RATES_KEY = 'LEARNED_RATES';
/** Version of the record; a record of another version is ignored (and replaced on the next save). */
export const LEARNED_RATES_VERSION = 1;
/** Most scopes kept; past it, the least recently learned go. */
export const MAX_LEARNED_RATES = 10_000;
/** Longest scope key kept (keys are hostnames, `host/path` or named scopes). */
const MAX_KEY_LENGTH = 1_000;

/** One scope's learned rate: the pace found safe and the lowest refused (requests per second), and when. */
export interface LearnedRateEntry {
    rate: number;
    unsafeRate?: number;
    /** Epoch ms of the save that last saw the scope crawled at this rate. */
    learnedAt: number;
}

/** What the store holds under {@link LEARNED_RATES_KEY}. */
export interface LearnedRatesRecord {
    version: typeof LEARNED_RATES_VERSION;
    rates: Record<string, LearnedRateEntry>;
}

const isRate = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

/** One entry as stored, or undefined when it is malformed. */
function readEntry(value: unknown): LearnedRateEntry | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const { rate, unsafeRate, learnedAt } = value as Record<string, unknown>;
    if (!isRate(rate) || typeof learnedAt !== 'number' || !Number.isFinite(learnedAt) || learnedAt < 0)
        return undefined;
    if (unsafeRate !== undefined && !isRate(unsafeRate)) return undefined;
    return unsafeRate === undefined ? { rate, learnedAt } : { rate, unsafeRate, learnedAt };
}

/** The usable entries of a stored record, by scope key (none when the record is missing or of another version). */
export function parseLearnedRates(value: unknown): Map<string, LearnedRateEntry> {
    const out = new Map<string, LearnedRateEntry>();
    if (typeof value !== 'object' || value === null) return out;
    const record = value as Record<string, unknown>;
    if (record.version !== LEARNED_RATES_VERSION) return out;
    const rates = record.rates;
    if (typeof rates !== 'object' || rates === null || Array.isArray(rates)) return out;
    for (const [key, raw] of Object.entries(rates)) {
        if (key === '' || key.length > MAX_KEY_LENGTH) continue;
        const entry = readEntry(raw);
        if (entry) out.set(key, entry);
    }
    return out;
}

/** Whether an entry learned at `learnedAt` still counts at `now`. */
export function isFresh(entry: LearnedRateEntry, now: number, maxAgeMs: number): boolean {
    return now - entry.learnedAt <= maxAgeMs;
}

/**
 * The record to store: what is stored, with ours laid over it (ours are newer), entries older than
 * `maxAgeMs` dropped, and at most `maxEntries` of the most recently learned kept.
 */
export function mergeLearnedRates(
    stored: ReadonlyMap<string, LearnedRateEntry>,
    ours: ReadonlyMap<string, LearnedRateEntry>,
    now: number,
    maxAgeMs: number,
    maxEntries = MAX_LEARNED_RATES,
): LearnedRatesRecord {
    const merged = new Map(stored);
    for (const [key, entry] of ours) {
        const theirs = merged.get(key);
        if (!theirs || theirs.learnedAt <= entry.learnedAt) merged.set(key, entry);
    }
    const kept = [...merged]
        .filter(([, entry]) => isFresh(entry, now, maxAgeMs))
        .sort((a, b) => b[1].learnedAt - a[1].learnedAt)
        .slice(0, maxEntries);
    return { version: LEARNED_RATES_VERSION, rates: Object.fromEntries(kept) };
}
