import { DEFAULTS } from '../options/defaults';
import type { RampupSettings, ScopeSettings } from '../options/scope-settings';
import type { RampupPolicy } from './rampup-policy';
import { RAMPUP_DEFAULTS } from './rampup-policy';

export type { RampupSettings, ScopeSettings } from '../options/scope-settings';

/** Resolves a `rampup` setting into the pace learner's policy. */
export function resolveRampup(setting: boolean | RampupSettings | undefined): RampupPolicy | undefined {
    if (!setting) return undefined;
    const s = setting === true ? {} : setting;
    return {
        ...RAMPUP_DEFAULTS,
        windowMs: s.windowSecs !== undefined ? s.windowSecs * 1000 : RAMPUP_DEFAULTS.windowMs,
        initialRate: s.initialRate ?? RAMPUP_DEFAULTS.initialRate,
        minRate: s.minRate ?? RAMPUP_DEFAULTS.minRate,
        maxRate: s.maxRate ?? RAMPUP_DEFAULTS.maxRate,
        maxConcurrency: s.maxConcurrency ?? RAMPUP_DEFAULTS.maxConcurrency,
    };
}

/** Settings of a scope with every default applied, in milliseconds. */
export interface ResolvedPolicy {
    concurrency: number;
    delayMs: number;
    delayPerSlotMs: number;
    jitter: readonly [number, number] | undefined;
    backoffStatusCodes: ReadonlySet<number>;
    backoffOnNetworkErrors: boolean;
    backoffFactor: number;
    backoffMinDelayMs: number;
    backoffMaxDelayMs: number;
    backoffWindowMs: number;
    ignoreRobotsCrawlDelay: boolean;
    /** The pace learner's settings; undefined when rampup is off. */
    rampup: RampupPolicy | undefined;
    /** Quota per window, or undefined for none. */
    quota: { limit: number; windowMs: number } | undefined;
    /** Which of concurrency/delay the user set explicitly for this scope (robots.txt then yields). */
    explicit: { concurrency: boolean; delay: boolean };
    /** The `scopes` key these settings came from; undefined for the defaults. */
    scopeKey?: string;
}

/** One scope's settings over the manager-wide defaults, in milliseconds. */
export function resolvePolicy(defaults: ScopeSettings, scope: ScopeSettings): ResolvedPolicy {
    const pick = <K extends keyof ScopeSettings>(key: K) => scope[key] ?? defaults[key];
    return {
        concurrency: pick('concurrency') ?? DEFAULTS.concurrency,
        delayMs: (pick('delaySecs') ?? DEFAULTS.delaySecs) * 1000,
        delayPerSlotMs: (pick('delayPerSlotSecs') ?? DEFAULTS.delayPerSlotSecs) * 1000,
        jitter: jitterRange(pick('jitter') ?? DEFAULTS.jitter),
        backoffStatusCodes: new Set(pick('backoffStatusCodes') ?? DEFAULTS.backoffStatusCodes),
        backoffOnNetworkErrors: pick('backoffOnNetworkErrors') ?? DEFAULTS.backoffOnNetworkErrors,
        backoffFactor: pick('backoffFactor') ?? DEFAULTS.backoffFactor,
        backoffMinDelayMs: (pick('baseDelaySecs') ?? DEFAULTS.baseDelaySecs) * 1000,
        backoffMaxDelayMs: (pick('maxDelaySecs') ?? DEFAULTS.maxDelaySecs) * 1000,
        backoffWindowMs: (pick('backoffWindowSecs') ?? DEFAULTS.backoffWindowSecs) * 1000,
        ignoreRobotsCrawlDelay: pick('ignoreRobotsCrawlDelay') ?? DEFAULTS.ignoreRobotsCrawlDelay,
        rampup: resolveRampup(pick('rampup') ?? DEFAULTS.rampup),
        quota:
            pick('quota') === undefined
                ? undefined
                : { limit: pick('quota')!, windowMs: (pick('quotaWindowSecs') ?? DEFAULTS.quotaWindowSecs) * 1000 },
        explicit: { concurrency: scope.concurrency !== undefined, delay: scope.delaySecs !== undefined },
    };
}

/** Normalises a jitter setting into a [low, high] multiplier range, or undefined for none. */
export function jitterRange(
    jitter: number | readonly [number, number] | undefined,
): readonly [number, number] | undefined {
    if (jitter === undefined || jitter === 0) return undefined;
    if (typeof jitter === 'number') return [1 - jitter, 1 + jitter];
    return jitter[0] === 1 && jitter[1] === 1 ? undefined : jitter;
}

/** Applies a jitter range to a delay with a random number from [0, 1). */
export function applyJitter(ms: number, range: readonly [number, number] | undefined, random: () => number): number {
    if (!range || ms <= 0) return ms;
    const [low, high] = range;
    return ms * (low + (high - low) * random());
}

/**
 * A deterministic random source (mulberry32) for reproducible jitter in tests and benchmarks.
 * Returns numbers in [0, 1).
 */
export function seededRandom(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
