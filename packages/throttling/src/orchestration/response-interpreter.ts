import type { Request, Session } from '@crawlee/core';

import type { Handout, HandoutLedger } from '../dispatch/handout-ledger';
import { scopeKeysOf } from '../dispatch/handout-ledger';
import { RequestBlockedError, RequestThrottledError, ThrottledRetriesExhaustedError } from '../core/errors';
import { assertPatchable } from '../core/crawlee-shape';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { PacingFloor } from '../pacing/pacing-floor';
import type { PacingRecorder } from '../dispatch/pacing-recorder';
import type { ScopeRouter } from '../scopes/scope-router';
import { REDIRECT_SCOPE_KEY } from '../scopes/scope-router';
import type { SharedClockSync } from '../shared-clock/shared-clock-sync';
import type { Clock } from '../core/clock';
import type { NavigationContext } from '../response/navigation-context';
import { parseRateLimitHeaders } from '../response/rate-limit-headers';
import type { RefusalVerdict } from '../response/refusal-rule';
import { bodyReader, isBodyReplay } from '../response/response-body';
import type { ResponseInfo } from '../response/response-info';
import { readResponse } from '../response/response-info';

export type { NavigationContext } from '../response/navigation-context';

/** Where the free-retry count of a request lives, so it survives reclaims and restarts. */
const FREE_RETRIES_KEY = '__throttledRetries';

/** The collaborators a response reaches. */
export interface ResponseInterpreterDeps {
    options: ResolvedThrottlingOptions;
    clock: Clock;
    router: ScopeRouter;
    states: DomainStateStore;
    floor: PacingFloor;
    handouts: HandoutLedger;
    shared: SharedClockSync;
    recorder: PacingRecorder;
    /** Whether a key is paced here (throttled, and not over the domain limit). */
    paces(key: string): boolean;
    warnOnce(message: string): void;
    /** A key's announced limits were applied (its clocks may have moved). */
    announced?(key: string): void;
}

/**
 * Reads one response of a handed-out request into the clocks of its scopes: an answer re-arms the
 * interval of one-at-a-time scopes and breaks a run of refusals; announced limits pace the domain;
 * a refusal backs the scopes off and is retried for free (until `maxFreeRetries`). `refusalWhen`
 * decides first, when set: a refusal the built-in rules would miss, or a block for Crawlee's
 * session handling.
 */
export class ResponseInterpreter {
    constructor(private readonly deps: ResponseInterpreterDeps) {}

    /**
     * Throws `RequestThrottledError` (or `ThrottledRetriesExhaustedError`) on a refusal, and
     * `RequestBlockedError` on a response `refusalWhen` calls blocked. Answers at once unless
     * `refusalWhen` is set (which may read the body).
     */
    handle(context: NavigationContext, response: unknown): void | Promise<void> {
        const info = readResponse(response);
        if (!info) return;
        const rule = this.deps.options.refusalWhen;
        if (!rule) return this.interpret(context, response, info, undefined);
        const { statusCode, headers, url } = info;
        const view = { statusCode, headers, url, body: bodyReader(context, response), raw: response };
        return rule(context, view).then((verdict) => this.interpret(context, response, info, verdict));
    }

    private interpret(
        context: NavigationContext,
        response: unknown,
        info: ResponseInfo,
        verdict: RefusalVerdict | undefined,
    ): void {
        const { router } = this.deps;
        const { request } = context;
        const now = this.deps.clock.now();
        const handout = this.deps.handouts.get(request);
        const redirectedTo = this.redirectedTo(request, handout, info);
        const key = redirectedTo ?? router.domainKeyOf(request.url);
        const queuedKeys = this.scopeKeys(handout, router.domainKeyOf(request.url));
        const scopeKeys = redirectedTo !== undefined ? [redirectedTo] : queuedKeys;
        const forced = verdict === 'refused';
        const triggers = forced || (verdict === undefined && this.isRefusal(info.statusCode, scopeKeys));
        // The first hop reached the queued domain too: its interval counts from this answer as well.
        const answeredKeys = redirectedTo !== undefined ? [...queuedKeys, redirectedTo] : scopeKeys;
        this.noteAnswer(answeredKeys, handout, triggers ? scopeKeys : [], now);
        if (verdict === 'blocked') {
            discardBodies(context, response);
            throw new RequestBlockedError(request.url, info.statusCode);
        }
        const limits = parseRateLimitHeaders(info.headers, now);
        if (!triggers) {
            if (key !== undefined && limits && this.deps.paces(key)) {
                const { backoffMaxDelayMs, rampup } = router.policyOf(key);
                this.deps.states.update(key, (s) =>
                    s.announce(now, { ...limits, sentAt: handout?.sentAt }, backoffMaxDelayMs, rampup),
                );
                this.deps.announced?.(key);
            }
            return;
        }
        if (!this.recordRefusal(request, scopeKeys, info.statusCode, limits?.waitMs, forced)) {
            this.warnUnthrottled429(info, key ?? request.url);
            return;
        }
        this.retryForFree(context, response, info.statusCode, limits?.waitMs);
    }

    private isRefusal(statusCode: number, scopeKeys: string[]): boolean {
        const { router, options } = this.deps;
        if (scopeKeys.length === 0) return options.defaultPolicy.backoffStatusCodes.has(statusCode);
        return scopeKeys.some((k) => router.policyOf(k).backoffStatusCodes.has(statusCode));
    }

    /** The server answered: re-arm one-at-a-time intervals, break refusal runs, end a shared lease. */
    private noteAnswer(scopeKeys: string[], handout: Handout | undefined, refusedBy: string[], now: number): void {
        const { router, states, floor, shared } = this.deps;
        for (const k of scopeKeys) {
            // A scope of a request we handed out keeps its state even past the domain limit.
            const known = handout?.domain !== undefined && this.deps.states.read(k) !== undefined;
            if (!known && !this.deps.paces(k)) continue;
            // When the request left and the interval its dispatch armed are its own key's.
            const sent =
                handout?.domain?.key === k && handout.sentAt !== undefined
                    ? { sentAt: handout.sentAt, intervalMs: handout.intervalMs }
                    : undefined;
            states.update(k, (s) => {
                s.armAfterResponse(now, floor.ms, router.policyOf(k), sent);
                s.noteReachable();
            });
            // A run of refusals is broken, whatever the request handler makes of the answer.
            if (!refusedBy.includes(k)) this.deps.recorder.answered(k, now, false, handout?.sentAt);
            shared.publish(k);
        }
        if (handout?.domain) shared.settle(handout.domain, now);
    }

    private scopeKeys(handout: Handout | undefined, key: string | undefined): string[] {
        if (handout?.domain) return scopeKeysOf(handout);
        return key === undefined ? [] : [key];
    }

    /**
     * The key of the domain that answered, when a redirect led to another one that is paced here:
     * the answer counts there (its refusals back that domain off, its successes count there), not
     * against the domain the request was queued under.
     */
    private redirectedTo(request: Request, handout: Handout | undefined, info: ResponseInfo): string | undefined {
        if (info.url === undefined || info.url === request.url) return undefined;
        const answered = this.deps.router.domainKeyOf(info.url);
        const queued = handout?.domain?.key ?? this.deps.router.domainKeyOf(request.url);
        if (answered === undefined || answered === queued || !this.deps.paces(answered)) return undefined;
        if (handout) handout.answeredBy = answered;
        // Kept with the request (userData is stored), so its retry also clears the answering domain.
        (request.userData as Record<string, unknown>)[REDIRECT_SCOPE_KEY] = answered;
        return answered;
    }

    /**
     * Backs off the scopes whose triggers include the status (every scope when `forced`: `refusalWhen`
     * said so); false when none is paced here.
     */
    private recordRefusal(request: Request, keys: string[], status: number, waitMs?: number, forced = false): boolean {
        const { router, recorder } = this.deps;
        const cause = { reason: 'refused' as const, statusCode: status };
        if (keys.length === 0) return recorder.record({ reason: 'rateLimited', url: request.url, waitMs }, cause);
        if (!keys.some((k) => this.deps.paces(k) || this.deps.states.read(k))) return false;
        // When the refused request left, for its own key: the learner places the refusal there.
        const handout = this.deps.handouts.get(request);
        const sentKey = handout?.domain?.key;
        let paced = false;
        for (const key of keys) {
            if (!forced && !router.policyOf(key).backoffStatusCodes.has(status)) continue;
            recorder.recordRateLimit(key, waitMs, cause, key === sentKey ? handout?.sentAt : undefined);
            paced = true;
        }
        return paced;
    }

    private retryForFree(context: NavigationContext, response: unknown, statusCode: number, waitMs?: number): never {
        const { request } = context;
        const { maxFreeRetries } = this.deps.options;
        const userData = request.userData as Record<string, unknown>;
        const freeRetries = (userData[FREE_RETRIES_KEY] as number | undefined) ?? 0;
        discardBodies(context, response);
        // Out of free retries: let Crawlee count this one like any failure.
        if (freeRetries >= maxFreeRetries)
            throw new ThrottledRetriesExhaustedError(request.url, statusCode, maxFreeRetries);
        userData[FREE_RETRIES_KEY] = freeRetries + 1;
        const key = this.deps.handouts.get(request)?.domain?.key;
        if (key !== undefined) this.deps.states.update(key, (s) => s.noteFreeRetry());
        spareSessionOnce(context.session);
        this.deps.handouts.markThrottledRetry(request);
        throw new RequestThrottledError(request.url, statusCode, waitMs);
    }

    private warnUnthrottled429(info: ResponseInfo, key: string): void {
        if (info.statusCode !== 429) return;
        const { domains } = this.deps.options;
        this.deps.warnOnce(
            `${key} answered 429, but this throttler does not throttle it (domains: ${domains === 'all' ? "'all'" : domains.join(', ')}); add it to domains to back off.`,
        );
    }
}

/**
 * Keeps a session from being penalised for one failed attempt: Crawlee calls `markBad()` after
 * every error, but a 429 is the server asking us to slow down, not a ban.
 */
export function spareSessionOnce(session: Session | undefined): void {
    if (!session) return;
    assertPatchable(session, 'markBad', 'Session.markBad');
    const target = session as unknown as Record<string, unknown>;
    if (Object.prototype.hasOwnProperty.call(target, 'markBad')) return;
    target.markBad = () => {
        delete target.markBad;
    };
}

/** Discards the response's body, and the stream that replays it when `refusalWhen` read it. */
function discardBodies(context: NavigationContext, response: unknown): void {
    discardBody(response);
    if (context.response !== response && isBodyReplay(context.response)) discardBody(context.response);
}

/** Discards an unread response body so the connection is not left holding it. */
export function discardBody(response: unknown): void {
    const stream = response as { destroy?: () => void; readableEnded?: boolean; destroyed?: boolean };
    if (typeof stream?.destroy === 'function' && !stream.destroyed && !stream.readableEnded) stream.destroy();
}
