import { DomainState } from '../../packages/throttling/src/pacing/domain-state';
import { saveState } from '../../packages/throttling/src/pacing/domain-state-codec';
import { isReady } from '../../packages/throttling/src/pacing/readiness-decision';
import { MAX_BACKOFF_EXPONENT } from '../../packages/throttling/src/pacing/backoff-steps';
import {
    parsePersistedState,
    PERSISTED_STATE_VERSION,
} from '../../packages/throttling/src/persistence/persisted-state';
import type { PersistedThrottlingState } from '../../packages/throttling/src/persistence/persisted-state';

const T0 = Date.UTC(2026, 0, 1);

/** A state with every clock and counter moved off its default, so a lost field shows. */
function busyState(domain: string): DomainState {
    const s = new DomainState(domain);
    s.setCrawlDelay(1_500);
    s.dispatch(T0, 250);
    s.recordRateLimit(T0 + 10, 30_000, { backoffMinDelayMs: 2_000, backoffMaxDelayMs: 60_000 });
    s.recordRateLimit(T0 + 50_000, undefined, { backoffMinDelayMs: 2_000, backoffMaxDelayMs: 60_000 });
    s.recordSuccess();
    return s;
}

function validRecord(): PersistedThrottlingState {
    const a = busyState('a.test');
    const b = new DomainState('b.test');
    return {
        version: PERSISTED_STATE_VERSION,
        savedAt: T0 + 60_000,
        floorMs: 400,
        domains: ['a.test', 'b.test', '::1'],
        states: { 'a.test': saveState(a), 'b.test': saveState(b) },
    };
}

/** The failure branch of a parse, or a test failure naming what came back instead. */
function failure(value: unknown): { reason: string; domains: string[] } {
    const parsed = parsePersistedState(value);
    if (!parsed || parsed.ok) throw new Error(`expected a failure, got ${JSON.stringify(parsed)}`);
    return parsed;
}

describe('parsePersistedState: nothing saved', () => {
    test.each([undefined, null])('%p means "no record", not a failure', (value) => {
        expect(parsePersistedState(value)).toBeUndefined();
    });
});

describe('parsePersistedState: a valid record', () => {
    test('round trip: every field of every state comes back, as DomainState instances', () => {
        const record = validRecord();
        const parsed = parsePersistedState(JSON.parse(JSON.stringify(record)));
        expect(parsed).toMatchObject({ ok: true, domains: ['a.test', 'b.test', '::1'], floorMs: 400 });
        if (!parsed?.ok) throw new Error('unreachable');
        expect(parsed.states).toHaveLength(2);
        for (const state of parsed.states) {
            expect(state).toBeInstanceOf(DomainState);
            expect(saveState(state)).toEqual(record.states[state.domain]);
        }
        // The backoff survives as an absolute deadline.
        const a = parsed.states.find((s) => s.domain === 'a.test')!;
        expect(a.backoffUntil).toBeGreaterThan(T0 + 50_000);
        expect(isReady(a, T0 + 50_001)).toBe(false);
    });

    test('an empty record (no domains, no states) is usable', () => {
        expect(parsePersistedState({ version: 1, savedAt: 0, floorMs: 0, domains: [], states: {} })).toEqual({
            ok: true,
            domains: [],
            states: [],
            floorMs: 0,
        });
    });

    test.each([
        ['missing', undefined],
        ['negative', -5],
        ['not finite', Infinity],
        ['NaN', NaN],
        ['a string', '400'],
    ])('a floorMs that is %s falls back to 0 without failing', (_label, floorMs) => {
        const record = { ...validRecord(), floorMs };
        const parsed = parsePersistedState(record);
        expect(parsed).toMatchObject({ ok: true, floorMs: 0 });
    });

    test('non-string and empty entries of domains are dropped', () => {
        const parsed = parsePersistedState({ ...validRecord(), domains: ['a.test', 7, '', null, 'b.test'] });
        expect(parsed).toMatchObject({ ok: true, domains: ['a.test', 'b.test'] });
    });

    test('a state with missing numeric fields takes their defaults', () => {
        const parsed = parsePersistedState({
            version: 1,
            savedAt: 0,
            floorMs: 0,
            domains: ['a.test'],
            states: { 'a.test': { domain: 'a.test', backoffUntil: T0 } },
        });
        if (!parsed?.ok) throw new Error(`expected ok, got ${JSON.stringify(parsed)}`);
        expect(saveState(parsed.states[0])).toEqual({ ...saveState(new DomainState('a.test')), backoffUntil: T0 });
    });

    test('an absurd backoff exponent is clamped, not trusted', () => {
        const parsed = parsePersistedState({
            ...validRecord(),
            states: { 'a.test': { domain: 'a.test', backoffExponent: 5_000 } },
        });
        if (!parsed?.ok) throw new Error(`expected ok, got ${JSON.stringify(parsed)}`);
        expect(parsed.states[0].backoff.backoffExponent).toBe(MAX_BACKOFF_EXPONENT);
    });
});

describe('parsePersistedState: unusable records never throw and name the reason', () => {
    test.each([
        ['a string', 'garbage', /expected an object, got string/],
        ['a number', 42, /expected an object, got number/],
        ['a boolean', true, /expected an object, got boolean/],
        ['a list', ['a.test'], /expected an object, got a list/],
    ])('%s', (_label, value, reason) => {
        const parsed = failure(value);
        expect(parsed.reason).toMatch(reason);
        expect(parsed.domains).toEqual([]);
    });

    test.each([
        ['another version', 99, /unknown version 99 \(expected 1\)/],
        ['a version as string', '1', /unknown version "1"/],
        ['no version', undefined, /unknown version/],
        ['version 0', 0, /unknown version 0/],
    ])('%s: unknown, but its domain list is salvaged', (_label, version, reason) => {
        const parsed = failure({ ...validRecord(), version });
        expect(parsed.reason).toMatch(reason);
        expect(parsed.domains).toEqual(['a.test', 'b.test', '::1']);
    });

    test('{version: 99} alone: unknown version, nothing to salvage', () => {
        expect(failure({ version: 99 })).toEqual({
            ok: false,
            reason: expect.stringMatching(/unknown version 99/),
            domains: [],
        });
    });

    test.each([
        ['missing', undefined],
        ['a string', 'a.test'],
        ['an object', { 'a.test': true }],
    ])('domains %s: `domains` is not a list', (_label, domains) => {
        const parsed = failure({ ...validRecord(), domains });
        expect(parsed.reason).toMatch(/`domains` is not a list/);
        expect(parsed.domains).toEqual([]);
    });

    test.each([
        ['missing', undefined],
        ['null', null],
        ['a list', [{ domain: 'a.test' }]],
        ['a string', 'a.test'],
    ])('states %s: `states` is not an object; domains salvaged', (_label, states) => {
        const parsed = failure({ ...validRecord(), states });
        expect(parsed.reason).toMatch(/`states` is not an object/);
        expect(parsed.domains).toEqual(['a.test', 'b.test', '::1']);
    });

    test.each([
        ['filed under another domain', { x: { domain: 'y' } }, 'x'],
        ['without a domain', { 'a.test': { backoffUntil: 5 } }, 'a.test'],
        ['with an empty domain', { '': { domain: '' } }, ''],
        ['null', { 'a.test': null }, 'a.test'],
        ['a number', { 'a.test': 3 }, 'a.test'],
        ['a negative clock', { 'a.test': { domain: 'a.test', backoffUntil: -1 } }, 'a.test'],
        ['a clock as string', { 'a.test': { domain: 'a.test', nextDispatchAt: '5' } }, 'a.test'],
        ['a non-finite clock', { 'a.test': { domain: 'a.test', decayAt: Infinity } }, 'a.test'],
        ['a NaN counter', { 'a.test': { domain: 'a.test', refusals: NaN } }, 'a.test'],
    ])('a state %s: wrong shape, the whole clock set is dropped, domains salvaged', (_label, states, named) => {
        const good = validRecord().states;
        const parsed = failure({
            version: 1,
            savedAt: T0,
            floorMs: 0,
            domains: ['a.test', 'b.test'],
            states: { 'b.test': good['b.test'], ...states },
        });
        expect(parsed.reason).toBe(`the state of ${named} has a wrong shape`);
        expect(parsed.domains).toEqual(['a.test', 'b.test']);
    });

    test('the exact record from the resume guide: {version:1, domains:[…], states:{x:{domain:"y"}}}', () => {
        expect(failure({ version: 1, domains: ['a.test', 'b.test'], states: { x: { domain: 'y' } } })).toEqual({
            ok: false,
            reason: 'the state of x has a wrong shape',
            domains: ['a.test', 'b.test'],
        });
    });
});
