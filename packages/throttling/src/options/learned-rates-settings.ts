/** Where learned rates are kept, and for how long they count. */
export interface LearnedRatesSettings {
    /**
     * The named key-value store that keeps them (one record, shared by every crawl on the storage).
     * @default 'crawlee-throttling-learned-rates'
     */
    storeName?: string;
    /**
     * A rate learned longer ago than this is ignored (and dropped from the store on the next save).
     * @default 604800 (7 days)
     */
    maxAgeSecs?: number;
}

/** The default store of learned rates: named, so Crawlee's `purgeOnStart` leaves it alone. */
export const DEFAULT_LEARNED_RATES_STORE = 'crawlee-throttling-learned-rates';
/** Learned rates older than this (7 days) are ignored by default: sites change. */
export const DEFAULT_LEARNED_RATES_MAX_AGE_SECS = 7 * 24 * 3600;

/** `rememberLearnedRates` with its defaults; undefined when it is off. */
export function resolveLearnedRates(setting: boolean | LearnedRatesSettings | undefined) {
    if (setting === false) return undefined;
    const s = setting === true || setting === undefined ? {} : setting;
    return {
        storeName: s.storeName ?? DEFAULT_LEARNED_RATES_STORE,
        maxAgeMs: (s.maxAgeSecs ?? DEFAULT_LEARNED_RATES_MAX_AGE_SECS) * 1000,
    };
}
