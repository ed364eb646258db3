import { ThrottlingOptionsError } from '../core/errors';
import type { ScopeRouter } from './scope-router';
import { normalizeScope } from '../options/request-scopes';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import { baseSettingsOf } from '../config/resolve-options';
import { resolvePolicy } from '../pacing/policy';
import { formatOptionIssues, scopeSchema } from '../options/options-schema';
import type { ResolvedPolicy } from '../pacing/policy';
import type { ScopeSettings } from '../options/scope-settings';

/**
 * Changes a scope's settings while the crawl runs (concurrency, delays, backoff, rampup, quota),
 * validated like the options, and remembers every change so it is saved with the clocks and
 * applied again on resume.
 */
export class ScopeEditor {
    // What was changed at run time, by normalised scope key (merged, as the record keeps it).
    private readonly changes = new Map<string, ScopeSettings>();

    constructor(
        private readonly options: ResolvedThrottlingOptions,
        private readonly router: ScopeRouter,
        private readonly changed: () => void,
    ) {}

    /** Merges `settings` into the scope's; throws `ThrottlingOptionsError` naming what is wrong. */
    update(scope: string, settings: ScopeSettings): string {
        const key = this.keyOf(scope);
        const parsed = scopeSchema.safeParse(settings);
        if (!parsed.success)
            throw new ThrottlingOptionsError(formatOptionIssues(`updateScope(${scope})`, parsed.error));
        const merged = { ...(this.options.scopeSettings.get(key) ?? {}), ...parsed.data };
        const policy = this.resolve(key, merged);
        (this.options.scopeSettings as Map<string, ScopeSettings>).set(key, merged);
        (this.options.scopes as Map<string, ResolvedPolicy>).set(key, policy);
        this.changes.set(key, merged);
        this.router.scopeChanged(key);
        this.changed();
        return key;
    }

    /** Every change made at run time, for the saved record. */
    saved(): Record<string, ScopeSettings> {
        return Object.fromEntries(this.changes);
    }

    /** Applies the changes a saved record holds; one that no longer validates is skipped with a warning. */
    restore(saved: Record<string, unknown>, warn: (message: string) => void): void {
        for (const [scope, settings] of Object.entries(saved)) {
            try {
                this.update(scope, settings as ScopeSettings);
            } catch (error) {
                warn(`A saved updateScope() change of ${scope} is ignored: ${(error as Error).message}`);
            }
        }
    }

    private keyOf(scope: string): string {
        try {
            return normalizeScope(scope, this.options.throttleBy);
        } catch (error) {
            throw new ThrottlingOptionsError(
                `updateScope: ${JSON.stringify(scope)} is not a scope: ${(error as Error).message}`,
            );
        }
    }

    private resolve(key: string, merged: ScopeSettings): ResolvedPolicy {
        const defaults = baseSettingsOf(this.options, key);
        const min = merged.baseDelaySecs ?? defaults.baseDelaySecs ?? 0;
        const max = merged.maxDelaySecs ?? defaults.maxDelaySecs ?? Infinity;
        if (min > max) {
            throw new ThrottlingOptionsError(
                `updateScope(${key}): baseDelaySecs (${min}) must not exceed maxDelaySecs (${max})`,
            );
        }
        return { ...resolvePolicy(defaults, merged), scopeKey: key };
    }
}
