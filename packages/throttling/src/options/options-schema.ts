import type { Configuration, IRequestManager } from '@crawlee/core';
import { z } from 'zod';

import type { IpResolver } from '../ip/ip-resolver';
import { QUEUE_LAYOUTS } from './queue-layout';
import type { RefusalWhen } from '../response/refusal-rule';
import type { RobotsFetcher } from './robots-fetcher';
import type { GetScopes } from './request-scopes';
import type { SharedDomainClock } from '../core/shared-domain-clock';
import type { Clock } from '../core/clock';
import { parseScopeKey } from './scope-key';

/** Opens the queue that holds one throttled domain's requests. */
export type RequestManagerOpener = (name: string, options: { config?: Configuration }) => Promise<IRequestManager>;

/** A request manager, or a factory called once on first use that returns one. */
export type InnerRequestManager = IRequestManager | (() => IRequestManager | Promise<IRequestManager>);

/**
 * The zod schema that validates `ThrottlingRequestManagerOptions` (a `z.strictObject`, so an
 * unknown option is named), and the formatting of its issues into one clear message.
 */

const isFunction = (value: unknown): value is (...args: never[]) => unknown => typeof value === 'function';
const isRequestManagerLike = (value: unknown): boolean =>
    typeof value === 'object' &&
    value !== null &&
    isFunction((value as IRequestManager).fetchNextRequest) &&
    isFunction((value as IRequestManager).addRequest);

const seconds = (what: string) =>
    z
        .number({ error: `${what} must be a number of seconds` })
        .finite(`${what} must be finite`)
        .min(0, `${what} must be >= 0`);

const statusCodes = z
    .array(z.number().int().min(100).max(599), {
        error: 'backoffStatusCodes must be a list of HTTP status codes (100-599)',
    })
    .optional();

const jitter = z
    .union(
        [
            z.number().min(0, 'jitter must be >= 0').lt(1, 'jitter must be < 1 (0.5 means ×[0.5, 1.5])'),
            z
                .tuple([z.number().min(0), z.number().min(0)])
                .refine(([low, high]) => low <= high, 'jitter [low, high] needs 0 <= low <= high'),
        ],
        { error: 'jitter must be a number in [0, 1) or a [low, high] pair' },
    )
    .optional();

const REFUSAL_WHEN_FORMS =
    "refusalWhen must be a function (context, response) => 'refused' | 'blocked' | undefined, or { statusCodes?, bodyPattern?, headerPattern? }";

const textPattern = (what: string) => {
    const message = `${what} must be a non-empty string (matched as a substring) or a RegExp`;
    return z.union([z.instanceof(RegExp), z.string().min(1, message)], { error: message });
};

const shorthandStatus = 'refusalWhen.statusCodes must be a list of HTTP status codes (100-599)';

/** The shorthand of `refusalWhen`: at least one of its fields. */
const refusalShorthand = z
    .strictObject({
        statusCodes: z
            .array(z.number(shorthandStatus).int(shorthandStatus).min(100, shorthandStatus).max(599, shorthandStatus), {
                error: shorthandStatus,
            })
            .min(1, 'refusalWhen.statusCodes must not be empty')
            .optional(),
        bodyPattern: textPattern('refusalWhen.bodyPattern').optional(),
        headerPattern: z
            .strictObject(
                {
                    name: z.string().min(1, 'refusalWhen.headerPattern.name must be a header name'),
                    pattern: textPattern('refusalWhen.headerPattern.pattern'),
                },
                { error: 'refusalWhen.headerPattern must be { name, pattern }' },
            )
            .optional(),
    })
    .refine((s) => s.statusCodes !== undefined || s.bodyPattern !== undefined || s.headerPattern !== undefined, {
        error: 'refusalWhen needs at least one of statusCodes, bodyPattern, headerPattern',
    });

/**
 * `refusalWhen`: a function, or the shorthand. Not a union, so a shorthand with a bad field is told
 * what is wrong with that field rather than that it is not a function either.
 */
const refusalWhen = z.custom<RefusalWhen>().superRefine((value, ctx) => {
    if (isFunction(value)) return;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: REFUSAL_WHEN_FORMS });
        return;
    }
    const parsed = refusalShorthand.safeParse(value);
    if (parsed.success) return;
    for (const issue of parsed.error.issues) {
        const message =
            issue.code === 'unrecognized_keys'
                ? `refusalWhen has unknown field(s) ${issue.keys.map((k) => `\`${k}\``).join(', ')} (allowed: statusCodes, bodyPattern, headerPattern)`
                : issue.message;
        ctx.addIssue({ code: 'custom', message, path: issue.path });
    }
});

/** The policy settings shared by the options and each `scopes` entry. */
const policyShape = {
    concurrency: z
        .number({ error: 'concurrency must be a whole number >= 1' })
        .int('concurrency must be a whole number')
        .min(1, 'concurrency must be >= 1')
        .optional(),
    delaySecs: seconds('delaySecs').optional(),
    delayPerSlotSecs: seconds('delayPerSlotSecs').optional(),
    jitter,
    backoffStatusCodes: statusCodes,
    backoffOnNetworkErrors: z.boolean({ error: 'backoffOnNetworkErrors must be true or false' }).optional(),
    backoffFactor: z
        .number({ error: 'backoffFactor must be a number >= 1' })
        .min(1, 'backoffFactor must be >= 1')
        .finite()
        .optional(),
    baseDelaySecs: seconds('baseDelaySecs').optional(),
    maxDelaySecs: seconds('maxDelaySecs').optional(),
    backoffWindowSecs: seconds('backoffWindowSecs').optional(),
    ignoreRobotsCrawlDelay: z.boolean({ error: 'ignoreRobotsCrawlDelay must be true or false' }).optional(),
    rampup: z
        .union(
            [
                z.boolean(),
                z.strictObject({
                    algorithm: z.literal('adaptive').optional(),
                    windowSecs: seconds('rampup.windowSecs').positive('rampup.windowSecs must be > 0').optional(),
                    initialRate: z.number().positive('rampup.initialRate must be > 0').optional(),
                    minRate: z.number().positive('rampup.minRate must be > 0').optional(),
                    maxRate: z.number().positive('rampup.maxRate must be > 0').optional(),
                    maxConcurrency: z.number().int().min(1, 'rampup.maxConcurrency must be >= 1').optional(),
                }),
            ],
            { error: (issue) => rampupError(issue.input) },
        )
        .optional(),
    quota: z.number({ error: 'quota must be a positive number' }).positive('quota must be > 0').finite().optional(),
    quotaWindowSecs: seconds('quotaWindowSecs').positive('quotaWindowSecs must be > 0').optional(),
};

/** One scope's settings (also what `updateScope()` validates). */
export const scopeSchema = z.strictObject(policyShape);

/** Validates {@link ThrottlingRequestManagerOptions}; unknown options are errors. */
export const throttlingOptionsSchema = z.strictObject({
    ...policyShape,
    scopes: z
        .record(z.string(), scopeSchema, { error: 'scopes must map scope keys to settings objects' })
        .superRefine((scopes, ctx) => {
            // Keys that normalise alike ('a.com/x/', 'a.com/%78') would otherwise silently overwrite each other.
            const seen = new Map<string, string>();
            for (const key of Object.keys(scopes)) {
                try {
                    const normal = parseScopeKey(key).key;
                    const first = seen.get(normal);
                    if (first !== undefined)
                        throw new Error(
                            `scope keys ${JSON.stringify(first)} and ${JSON.stringify(key)} name the same scope ${normal}: keep one`,
                        );
                    seen.set(normal, key);
                } catch (error) {
                    ctx.addIssue({ code: 'custom', message: (error as Error).message, path: [key] });
                }
            }
        })
        .optional(),
    random: z
        .custom<() => number>(isFunction, { error: 'random must be a function returning a number in [0, 1)' })
        .optional(),
    maxFreeRetries: z.number().int().min(0, 'maxFreeRetries must be >= 0').optional(),
    getScopes: z.custom<GetScopes>(isFunction, { error: 'getScopes must be a function of the request' }).optional(),
    inner: z
        .custom<InnerRequestManager>((v) => isRequestManagerLike(v) || isFunction(v), {
            error: 'inner must be a request manager (with fetchNextRequest and addRequest) or a function returning one',
        })
        .optional(),
    domains: z.union(
        [z.literal('all'), z.array(z.string({ error: 'each entry of domains must be a hostname string' }))],
        {
            error: "domains is required: a list of hostnames, or 'all'",
        },
    ),
    throttleBy: z
        .enum(['hostname', 'registrableDomain', 'ip'], {
            error: "throttleBy must be 'hostname', 'registrableDomain' or 'ip'",
        })
        .optional(),
    ipScope: z
        .custom<unknown>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
            error: 'ipScope must be an object of scope settings (concurrency, delaySecs, ...)',
        })
        .pipe(scopeSchema)
        .optional(),
    ipResolver: z
        .custom<IpResolver>(isFunction, {
            error: 'ipResolver must be a function (hostname) => Promise<{ addresses: string[]; ttlSecs: number }>',
        })
        .optional(),
    rememberLearnedRates: z
        .union(
            [
                z.boolean(),
                z.strictObject({
                    storeName: z
                        .string()
                        .regex(
                            /^[a-zA-Z0-9-]{1,63}$/,
                            'rememberLearnedRates.storeName must be 1-63 letters, digits or hyphens (a key-value store name)',
                        )
                        .optional(),
                    maxAgeSecs: seconds('rememberLearnedRates.maxAgeSecs')
                        .positive('rememberLearnedRates.maxAgeSecs must be > 0')
                        .optional(),
                }),
            ],
            { error: 'rememberLearnedRates must be true/false or an object with storeName, maxAgeSecs' },
        )
        .optional(),
    minCrawlDelaySecs: seconds('minCrawlDelaySecs').optional(),
    maxDomainStallSecs: seconds('maxDomainStallSecs').optional(),
    maxThrottledDomains: z
        .number({ error: 'maxThrottledDomains must be a positive integer' })
        .int('maxThrottledDomains must be an integer')
        .positive('maxThrottledDomains must be >= 1')
        .optional(),
    queueLayout: z.enum(QUEUE_LAYOUTS, { error: "queueLayout must be 'perDomain' or 'shared'" }).optional(),
    frontierWindow: z
        .number({ error: 'frontierWindow must be a whole number >= 1 (requests held in memory)' })
        .int('frontierWindow must be a whole number >= 1 (requests held in memory)')
        .min(1, 'frontierWindow must be a whole number >= 1 (requests held in memory)')
        .optional(),
    frontierWindowPerDomain: z
        .number({ error: 'frontierWindowPerDomain must be a whole number >= 1' })
        .int('frontierWindowPerDomain must be a whole number >= 1')
        .min(1, 'frontierWindowPerDomain must be a whole number >= 1')
        .optional(),
    persistStateKey: z.string().min(1, 'persistStateKey must be a non-empty string').optional(),
    requestManagerOpener: z
        .custom<RequestManagerOpener>(isFunction, { error: 'requestManagerOpener must be a function' })
        .optional(),
    respectCrawlDelay: z.boolean({ error: 'respectCrawlDelay must be true or false' }).optional(),
    maxCrawlDelaySecs: seconds('maxCrawlDelaySecs').positive('maxCrawlDelaySecs must be > 0').optional(),
    robotsUserAgent: z.string().min(1, 'robotsUserAgent must be a non-empty string').optional(),
    robotsFetcher: z.custom<RobotsFetcher>(isFunction, { error: 'robotsFetcher must be a function' }).optional(),
    refusalWhen: refusalWhen.optional(),
    maxRobotsRetries: z
        .number({ error: 'maxRobotsRetries must be a whole number >= 0' })
        .int('maxRobotsRetries must be a whole number >= 0')
        .min(0, 'maxRobotsRetries must be a whole number >= 0')
        .optional(),
    robotsUnreachableDisallowSecs: seconds('robotsUnreachableDisallowSecs').optional(),
    sameDomainDelay: z.enum(['fold', 'refuse'], { error: "sameDomainDelay must be 'fold' or 'refuse'" }).optional(),
    clock: z
        .custom<Clock>((v) => typeof v === 'object' && v !== null && isFunction((v as Clock).now), {
            error: 'clock must be an object with a now() method returning epoch milliseconds',
        })
        .optional(),
    maxConsecutiveErrors: z
        .number({ error: 'maxConsecutiveErrors must be a whole number >= 0 (0 turns the error budget off)' })
        .int('maxConsecutiveErrors must be a whole number >= 0 (0 turns the error budget off)')
        .min(0, 'maxConsecutiveErrors must be a whole number >= 0 (0 turns the error budget off)')
        .optional(),
    onExcessiveCrawlDelay: z
        .enum(['cap', 'skip'], { error: "onExcessiveCrawlDelay must be 'cap' or 'skip'" })
        .optional(),
    onSharedClockError: z
        .enum(['pause', 'local'], { error: "onSharedClockError must be 'pause' or 'local'" })
        .optional(),
    sharedClock: z
        .custom<SharedDomainClock>(
            (v) =>
                typeof v === 'object' &&
                v !== null &&
                ['reserve', 'extend', 'settle'].every((m) => isFunction((v as never)[m])),
            {
                error: 'sharedClock must implement reserve(key, now, nextAt), extend(key, clocks) and settle(key, leasedUntil, nextAt), e.g. new FileDomainClock(dir)',
            },
        )
        .refine((v) => !isFunction((v as never)['acquireSlot']) || isFunction((v as never)['releaseSlot']), {
            error: 'sharedClock has acquireSlot but no releaseSlot: shared slots need both (or neither)',
        })
        .optional(),
});

/** Options that were renamed or removed, and what to use instead (named in the error). */
const RENAMED: Record<string, string> = {
    backoffMinDelaySecs: '`baseDelaySecs`',
    backoffMaxDelaySecs: '`maxDelaySecs`',
    windowSecs: '`quotaWindowSecs`',
    stateStore: 'gone: domain states are internal; share clocks across processes with `sharedClock`',
};

/** Turns zod's issues into one message that names each bad option and what is allowed. */
export function formatOptionIssues(subject: string, error: z.ZodError): string {
    const lines = error.issues.map((issue) => {
        if (issue.code === 'unrecognized_keys') {
            const where = issue.path.length ? ` in \`${issue.path.join('.')}\`` : '';
            const known = issue.keys.filter((k) => k in RENAMED).map((k) => `\`${k}\` is now ${RENAMED[k]}`);
            const unknown = `unknown option(s) ${issue.keys.map((k) => `\`${k}\``).join(', ')}${where}`;
            return known.length > 0 ? `${unknown} (${known.join('; ')})` : unknown;
        }
        const path = issue.path.length ? `\`${issue.path.join('.')}\`` : 'options';
        return `${path}: ${issue.message}`;
    });
    return `Invalid ${subject} options: ${lines.join('; ')}`;
}

/**
 * The message for a `rampup` value the schema refused: a removed algorithm (`'search'`) is named, with
 * the one allowed.
 */
function rampupError(input: unknown): string {
    const o = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    if ('algorithm' in o && o.algorithm !== 'adaptive')
        return `rampup.algorithm must be 'adaptive' (the only one; 'search' was removed), got ${JSON.stringify(o.algorithm)}`;
    return 'rampup must be true/false or an object with algorithm, windowSecs, initialRate, minRate, maxRate, maxConcurrency';
}
