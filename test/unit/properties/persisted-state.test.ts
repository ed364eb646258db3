import fc from 'fast-check';

import { DomainState } from '../../../packages/throttling/src/pacing/domain-state';
import { restoreState, saveState } from '../../../packages/throttling/src/pacing/domain-state-codec';
import { interval } from '../../../packages/throttling/src/pacing/readiness-decision';
import { RAMPUP_DEFAULTS } from '../../../packages/throttling/src/pacing/rampup-policy';
import { PaceLearner } from '../../../packages/throttling/src/pacing/pace-learner';
import type { RatePacer } from '../../../packages/throttling/src/pacing/rate-pacer';
import {
    parsePersistedState,
    PERSISTED_STATE_VERSION,
} from '../../../packages/throttling/src/persistence/persisted-state';
import { fcParams } from './fc-params';

const T0 = Date.UTC(2026, 0, 1);

const DOMAIN_NUMBERS = Object.keys(saveState(new DomainState('x'))).filter((k) => k !== 'domain');
const RAMPUP_NUMBERS = ['rate', 'safeRate', 'unsafeRate', 'extraConcurrency', 'safeExtraConcurrency'];
const RAMPUP_KNOWN = ['kind', ...RAMPUP_NUMBERS];
// Keys an attacker or a corrupted store may add: prototype keys, method names, private fields.
const HOSTILE_KEYS = [
    '__proto__',
    'constructor',
    'prototype',
    'toJSON',
    'delayMs',
    'onDispatch',
    'ramp',
    'interval',
    'slotBoundInWindow',
    'firstStretchStart',
    'firstStretchDispatches',
    'slotNextAt',
    'busySlots',
    'rampupState',
];

const number = fc.oneof(
    fc.nat({ max: 1_000 }),
    fc.double({ min: -10, max: 1e6, noNaN: true }),
    fc.constantFrom(-1, 0, 0.5, 1e300, T0),
);
const jsonish = fc.oneof(number, fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('5', null, true, [], {}));
const hostileEntries = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...HOSTILE_KEYS), fc.string()), jsonish), {
    maxLength: 4,
});

/** A record as JSON.parse would hand it over: `__proto__` is an own key there, not the prototype. */
const fromJson = (entries: [string, unknown][]) => JSON.parse(JSON.stringify(Object.fromEntries(entries))) as unknown;

/** Mostly well-formed rampup data, with fields dropped, mistyped and hostile keys added. */
const rampupRecord = fc
    .tuple(
        fc.tuple(
            fc.tuple(
                fc.constant('kind'),
                fc.oneof({ weight: 6, arbitrary: fc.constant('adaptive') }, { weight: 1, arbitrary: jsonish }),
            ),
            ...RAMPUP_NUMBERS.map((k) =>
                fc.tuple(fc.constant(k), fc.oneof({ weight: 4, arbitrary: number }, { weight: 1, arbitrary: jsonish })),
            ),
        ),
        fc.array(fc.boolean(), { minLength: RAMPUP_KNOWN.length, maxLength: RAMPUP_KNOWN.length }),
        hostileEntries,
    )
    .map(([known, keep, hostile]) => fromJson([...known.filter((_, i) => keep[i] || i < 4), ...hostile]));

const domainRecord = fc
    .tuple(
        fc.oneof(fc.domain(), fc.constantFrom('', '__proto__')),
        fc.tuple(
            ...DOMAIN_NUMBERS.map((k) =>
                fc.tuple(fc.constant(k), fc.oneof({ weight: 6, arbitrary: number }, { weight: 1, arbitrary: jsonish })),
            ),
        ),
        fc.option(rampupRecord, { nil: undefined }),
        hostileEntries,
    )
    .map(([domain, numbers, rampup, hostile]) =>
        fromJson([
            ['domain', domain],
            ...numbers,
            ...(rampup === undefined ? [] : [['rampup', rampup] as [string, unknown]]),
            ...hostile,
        ]),
    );

const isClean = (value: object, prototype: object, known: string[]) =>
    Object.getPrototypeOf(value) === prototype && Object.keys(value).every((k) => known.includes(k));

/** What a usable rampup state looks like: its methods intact, every field a number it can compute with. */
function expectUsableRampup(state: RatePacer): void {
    expect(Object.getPrototypeOf(state)).toBe(PaceLearner.prototype);
    expect(state.rate > 0).toBe(true);
    expect(Number.isFinite(state.delayMs()) && state.delayMs() >= 0).toBe(true);
    for (const key of RAMPUP_NUMBERS) expect(typeof (state as unknown as Record<string, unknown>)[key]).toBe('number');
    expect(Number.isSafeInteger(state.extraConcurrency) && state.extraConcurrency >= 0).toBe(true);
    expect(state.slotBoundInWindow).toBe(false);
    expect(Object.keys(state.toJSON()).sort()).toEqual([...RAMPUP_KNOWN].sort());
}

describe('persisted state: properties', () => {
    afterEach(() => {
        // A parser that writes through `__proto__` would show up here, on every object.
        expect(Object.keys(Object.prototype)).toEqual([]);
    });

    test('PaceLearner.fromJSON never throws, and takes only known fields with usable values', () => {
        fc.assert(
            fc.property(fc.oneof(rampupRecord, jsonish), (data) => {
                const state = PaceLearner.fromJSON(data);
                if (state === undefined) return;
                expectUsableRampup(state);
                // Still works after a dispatch and a trigger.
                state.onDispatch(T0, RAMPUP_DEFAULTS);
                state.onTrigger(T0 + 1, RAMPUP_DEFAULTS);
                expectUsableRampup(state);
            }),
            fcParams(500),
        );
    });

    test('PaceLearner: toJSON then fromJSON gives the same data', () => {
        fc.assert(
            fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat({ max: 5_000 })), { maxLength: 30 }), (events) => {
                const state = new PaceLearner();
                let now = T0;
                for (const [trigger, gap] of events) {
                    now += gap;
                    if (trigger) state.onTrigger(now, RAMPUP_DEFAULTS);
                    else state.onDispatch(now, RAMPUP_DEFAULTS);
                }
                const back = PaceLearner.fromJSON(JSON.parse(JSON.stringify(state.toJSON())));
                expect(back?.toJSON()).toEqual(state.toJSON());
            }),
            fcParams(300),
        );
    });

    test('restoring a saved state never throws, and keeps only known fields with finite, non-negative values', () => {
        fc.assert(
            fc.property(fc.oneof(domainRecord, jsonish), (data) => {
                const state = restoreState(data);
                if (state === undefined) return;
                expect(Object.getPrototypeOf(state)).toBe(DomainState.prototype);
                const json = saveState(state) as unknown as Record<string, unknown>;
                expect(isClean(json, Object.prototype, ['domain', 'rampup', ...DOMAIN_NUMBERS])).toBe(true);
                for (const key of DOMAIN_NUMBERS)
                    expect(Number.isFinite(json[key]) && (json[key] as number) >= 0).toBe(true);
                if (state.rampupState) expectUsableRampup(state.rampupState);
                expect(Number.isFinite(interval(state, T0, 0).ms)).toBe(true);
            }),
            fcParams(500),
        );
    });

    test('parsePersistedState never throws; ok means clean states, not ok names a reason', () => {
        const states = fc
            .array(domainRecord, { maxLength: 3 })
            .map((records) => Object.fromEntries(records.map((r) => [(r as { domain?: unknown }).domain, r])));
        const record = fc.record(
            {
                version: fc.oneof(fc.constant(PERSISTED_STATE_VERSION), jsonish),
                savedAt: jsonish,
                floorMs: jsonish,
                domains: fc.oneof(fc.array(fc.oneof(fc.domain(), jsonish), { maxLength: 4 }), jsonish),
                states: fc.oneof({ weight: 3, arbitrary: states }, { weight: 1, arbitrary: jsonish }),
            },
            { requiredKeys: [] },
        );
        fc.assert(
            fc.property(fc.oneof({ weight: 4, arbitrary: record }, { weight: 1, arbitrary: jsonish }), (value) => {
                const parsed = parsePersistedState(JSON.parse(JSON.stringify(value ?? null)));
                if (parsed === undefined) return;
                expect(parsed.domains.every((d) => typeof d === 'string' && d !== '')).toBe(true);
                if (!parsed.ok) {
                    expect(parsed.reason.length).toBeGreaterThan(0);
                    return;
                }
                expect(Number.isFinite(parsed.floorMs) && parsed.floorMs >= 0).toBe(true);
                for (const state of parsed.states) {
                    expect(Object.getPrototypeOf(state)).toBe(DomainState.prototype);
                    if (state.rampupState) expectUsableRampup(state.rampupState);
                }
            }),
            fcParams(400),
        );
    });
});

describe('PaceLearner.fromJSON: regression, it copied every key it was given', () => {
    const valid = new PaceLearner().toJSON();
    const parse = (extra: Record<string, unknown>) =>
        PaceLearner.fromJSON(JSON.parse(JSON.stringify({ ...valid, ...extra })));

    test('a stored `__proto__` does not replace the prototype (methods stay)', () => {
        const state = PaceLearner.fromJSON(JSON.parse(`{"__proto__":{"x":1},${JSON.stringify(valid).slice(1)}`));
        expect(Object.getPrototypeOf(state)).toBe(PaceLearner.prototype);
        expect(state?.delayMs()).toBe(0);
    });

    test('unknown keys and method names are not taken', () => {
        const state = parse({ delayMs: 5, onTrigger: 'x', slotBoundInWindow: true, firstStretchStart: 'x', evil: 1 });
        expect(typeof state?.delayMs).toBe('function');
        expect(typeof state?.onTrigger).toBe('function');
        expect(state?.slotBoundInWindow).toBe(false);
        expect(Object.keys(state!)).not.toContain('firstStretchStart');
        expect(Object.keys(state!)).not.toContain('evil');
    });

    test.each([
        ['extraConcurrency', '3'],
        ['safeExtraConcurrency', -1],
        ['extraConcurrency', 1.5],
        ['safeRate', -2],
        ['rate', -7],
        ['rate', 5e-324],
        ['unsafeRate', 0],
        ['kind', 'search'],
    ])('%s = %p is rejected', (key, value) => {
        expect(parse({ [key]: value })).toBeUndefined();
    });

    test('a domain state or a persisted record carrying such rampup data is not taken either', () => {
        const domain = { ...saveState(new DomainState('a.test')), rampup: { ...valid, extraConcurrency: 'many' } };
        expect(restoreState(domain)).toBeUndefined();
        const record = {
            version: PERSISTED_STATE_VERSION,
            floorMs: 0,
            domains: ['a.test'],
            states: { 'a.test': domain },
        };
        expect(parsePersistedState(record)).toEqual({
            ok: false,
            reason: 'the state of a.test has a wrong shape',
            domains: ['a.test'],
        });
    });
});
