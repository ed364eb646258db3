// `crawlee-throttling/types`: the narrower types the public API's signatures name. Most code never
// spells them out (TypeScript infers them from the options and the methods); import them from here to
// write a function or a class apart from where it is passed. Types only: this entry has no values.

// ---- The parts of the options ----
export type { RequestManagerOpener, InnerRequestManager, LearnedRatesSettings } from './options/options';
export type { GetScopes, ScopesDeclaration, RequestScopes } from './options/request-scopes';
export type { RobotsFetcher, RobotsFetchResult } from './options/robots-fetcher';
export type { IpResolver, ResolvedAddresses } from './ip/ip-resolver';

// ---- The parts of `refusalWhen` ----
export type {
    RefusalWhenFunction,
    RefusalWhenShorthand,
    RefusalVerdict,
    RefusalResponse,
    TextPattern,
} from './response/refusal-rule';

// ---- The parts of what the manager takes, answers and emits ----
export type { AttachableCrawler } from './integration/crawler-integration';
export type { NavigationContext } from './response/navigation-context';
export type { UrlLessPacingSignal, PacingScope } from './orchestration/scoped-signal';
export type { ReadinessOf } from './readiness/readiness';
export type { IntervalReason } from './pacing/domain-state-types';
export type { ThrottlingListener, BackoffReason } from './core/throttling-events';
export type { StalledDomain } from './core/errors';

// ---- What a custom SharedDomainClock implements, takes and answers ----
export type { SharedDomainClock, SharedReservation, SharedClocks } from './core/shared-domain-clock';
export type { MaybePromise } from './core/maybe-promise';
export type {
    RefusalPolicy,
    SharedRefusal,
    SlotLease,
    QuotaSpend,
    SharedRate,
    SharedTally,
    TallyCounts,
} from './core/shared-limit-types';
