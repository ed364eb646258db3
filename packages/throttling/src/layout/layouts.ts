import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { QueueLayout } from '../options/queue-layout';
import type { KeyRules } from '../queues/key-rules';
import { boundedKeys, RECENCY_KEYS } from '../queues/key-rules';
import type { LayoutStrategy } from './layout-strategy';
import { PerDomainLayout } from './per-domain-layout';
import type { SharedLayoutDeps } from './shared-layout';
import { SharedLayout } from './shared-layout';

/** One queue layout: the rules its registry keeps keys by, and the strategy built on that registry. */
export interface LayoutKind {
    keyRules(options: ResolvedThrottlingOptions): KeyRules;
    build(deps: SharedLayoutDeps): LayoutStrategy;
}

/** The queue layouts by `queueLayout`; `assemble` looks one up once. */
export const LAYOUTS: Readonly<Record<QueueLayout, LayoutKind>> = {
    perDomain: {
        keyRules: (options) => boundedKeys(options),
        build: ({ options, registry }) => new PerDomainLayout(options, registry),
    },
    shared: {
        keyRules: () => RECENCY_KEYS,
        build: (deps) => new SharedLayout(deps),
    },
};
