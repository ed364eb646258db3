import type { ResolvedPolicy } from './policy';
import type { RatePacerData } from './rate-pacer';

/** The serialisable part of a domain's state (what is persisted and restored). */
export interface DomainStateData {
    domain: string;
    /** Crawl delay declared for the domain (robots.txt `Crawl-delay`), in ms; 0 when none. */
    crawlDelayMs: number;
    /** Crawl-delay clock: earliest time of the next dispatch. */
    nextDispatchAt: number;
    /** Backoff clock: no dispatch before this time. 0 when never backed off. */
    backoffUntil: number;
    /** How many escalations since the last decay; the next exponential wait is base × factor^exponent. */
    backoffExponent: number;
    /** The wait imposed by the last escalation, in ms. */
    lastBackoffMs: number;
    /** After this time without a new refusal the exponent starts over. 0 when nothing to decay. */
    decayAt: number;
    /** Start of the current unbroken run of refusals; 0 when the domain is not refusing. */
    refusingSince: number;
    /** Time of the last refusal; 0 when none. */
    lastRefusalAt: number;
    /** Refusing time accumulated in the current run (idle time and crawl delay excluded). */
    stallMs: number;
    /** The wait imposed at the last refusal (remaining backoff at that moment), in ms. */
    lastImposedMs: number;
    /** Pacing raised by backoff triggers, in ms; decays one factor per quiet window. */
    penaltyMs: number;
    /** Time of the last backoff trigger (escalation); 0 when none. */
    lastTriggerAt: number;
    /** Pacing announced by the server (quota left over the time to its reset), in ms. */
    announcedIntervalMs: number;
    /** Until when the announced pacing applies. */
    announcedUntil: number;
    /** Start of the current quota window, and the cost spent in it. */
    quotaWindowStart: number;
    quotaSpent: number;
    /** The rampup search, when the scope ramps up. */
    rampup?: RatePacerData;
    /** Counters for users and reports. */
    dispatched: number;
    refusals: number;
    handled: number;
    /** Network errors or timeouts in a row with no answer in between. */
    consecutiveErrors: number;
    /** Time spent backed off in all. */
    backedOffMs: number;
    /** Requests sent back for a free retry after a refusal. */
    freeRetries: number;
}

/** What a rate-limit signal did to the backoff clock. */
export interface RateLimitOutcome {
    /** False when the refusal arrived while the backoff clock was already running (a burst). */
    escalated: boolean;
    /** The wait now in force, in ms from the refusal. */
    waitMs: number;
    /** Set when the wait was cut to `maxDelayMs`: which source asked for more. */
    cappedFrom?: { source: 'retry-after' | 'exponential'; requestedMs: number };
}

/**
 * What the backoff reads: the scope's policy under its own names (one set of names for the whole
 * package), plus the random source that feeds the jitter.
 */
export type BackoffPolicy = Pick<ResolvedPolicy, 'backoffMinDelayMs' | 'backoffMaxDelayMs'> &
    Partial<Pick<ResolvedPolicy, 'backoffFactor' | 'backoffWindowMs' | 'jitter' | 'rampup'>> & {
        random?: () => number;
    };

/** Why the interval between dispatches is what it is (for the snapshot). */
export type IntervalReason = 'none' | 'configured' | 'rampup' | 'crawl-delay' | 'floor' | 'backoff' | 'announced';

/** Undo token of a dispatch, for a fetch that turned out to have nothing to hand out. */
export interface DispatchReservation {
    readonly previousNextDispatchAt: number;
    readonly armedNextDispatchAt: number;
    /** The concurrency slot taken. */
    readonly slot: number;
    readonly previousSlotNextAt: number;
    /** A probe of the site (robots.txt), not a request: not counted as dispatched. */
    readonly probe?: boolean;
}

/** What a response's RateLimit headers announced, and when its request was sent (when known). */
export interface AnnouncedLimits {
    /** Requests left in the current window. */
    readonly remaining?: number;
    /** Milliseconds until the window resets. */
    readonly resetMs?: number;
    /** When the request the answer is to was sent, epoch ms. */
    readonly sentAt?: number;
}

/** A request that got its answer: when it was handed out (epoch ms) and the interval its dispatch armed. */
export interface SentRequest {
    readonly sentAt: number;
    readonly intervalMs?: number;
}

/** The pacing a domain gets when no policy is given: one clock, no concurrency cap. */
export const UNLIMITED: Pick<
    ResolvedPolicy,
    'concurrency' | 'delayMs' | 'delayPerSlotMs' | 'jitter' | 'ignoreRobotsCrawlDelay' | 'explicit'
> = {
    concurrency: Number.POSITIVE_INFINITY,
    delayMs: 0,
    delayPerSlotMs: 0,
    jitter: undefined,
    ignoreRobotsCrawlDelay: false,
    explicit: { concurrency: false, delay: false },
};

/** The part of a policy that pacing decisions read. */
export type PacingPolicy = Pick<
    ResolvedPolicy,
    'concurrency' | 'delayMs' | 'delayPerSlotMs' | 'jitter' | 'ignoreRobotsCrawlDelay' | 'explicit'
> &
    Partial<Pick<ResolvedPolicy, 'backoffFactor' | 'backoffMinDelayMs' | 'backoffWindowMs' | 'rampup' | 'quota'>>;

/** The fields that are points in time a domain waits for. */
export const CLOCK_FIELDS = [
    'nextDispatchAt',
    'backoffUntil',
    'decayAt',
    'announcedUntil',
] as const satisfies readonly (keyof DomainStateData)[];

/** The times and paces a scope's `BackoffClock` keeps, in their saved order. */
export const BACKOFF_CLOCK_FIELDS = [
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
] as const satisfies readonly (keyof DomainStateData)[];

/** The fields a scope's `BackoffClock` keeps: its times and paces, and its refusal statistics. */
export const BACKOFF_FIELDS = [
    ...BACKOFF_CLOCK_FIELDS,
    'refusals',
    'backedOffMs',
    'freeRetries',
] as const satisfies readonly (keyof DomainStateData)[];

/** The saved fields a `BackoffClock` writes and reads. */
export type BackoffData = Pick<DomainStateData, (typeof BACKOFF_FIELDS)[number]>;

/** Whether saved fields hold anything a `BackoffClock` keeps (else a restored scope need not make one). */
export function anyBackoffData(data: BackoffData): boolean {
    return BACKOFF_FIELDS.some((key) => data[key] !== 0);
}
