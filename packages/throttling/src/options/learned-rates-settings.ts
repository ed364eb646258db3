import { DEFAULTS } from './defaults';

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

/** `rememberLearnedRates` with its defaults; undefined when it is off. */
export function resolveLearnedRates(setting: boolean | LearnedRatesSettings | undefined) {
    const on = setting ?? DEFAULTS.rememberLearnedRates;
    if (on === false) return undefined;
    const s = on === true ? {} : on;
    return {
        storeName: s.storeName ?? DEFAULTS.learnedRates.storeName,
        maxAgeMs: (s.maxAgeSecs ?? DEFAULTS.learnedRates.maxAgeSecs) * 1000,
    };
}
