/**
 * Tuning runner (not part of `npm test`): a seeded family of mixes in the simulation, each crawled with
 * defaults and by the oracle (the same crawl told each site's limit), seeds from the environment:
 * `SEEDS=1000:60 NODE_OPTIONS=--experimental-vm-modules npx jest test/tuning/sim-family.tune.ts --testMatch '**\/*.tune.ts'`.
 * Half the mixes are B5's token-bucket family (sites that send RateLimit headers become the fixed
 * windows real limiters that send them are); the other half draw the other limiter kinds. Tune on
 * 1000–1059, judge on 5000–5059. `PRINT_SITES=1` prints each site's kind and refusals.
 */
import { MIX_RANGES, drawMixes } from '../../packages/bench/src/mixes';
import { asRealLimiter, lateAcceptedPerSecond, simulateCrawl, simulateOracle } from '../helpers/rate-limited-sim';
import type { SimLimiter, SimSite } from '../helpers/rate-limited-sim';

const [first, count] = (process.env.SEEDS ?? '1000:60').split(':').map(Number);

/** A small seeded random source (mulberry32), so a seed always draws the same mix. */
function random(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** One to three sites of the other limiter kinds. */
function drawKinds(seed: number): { sites: SimSite[]; pages: number; kind: string } {
    const r = random(seed);
    const between = (lo: number, hi: number) => lo + (hi - lo) * r();
    const int = (lo: number, hi: number) => Math.floor(between(lo, hi + 1));
    const long = r() < 0.2;
    const sites: SimSite[] = [];
    const names: string[] = [];
    for (let i = 0, n = int(1, 3); i < n; i++) {
        const kind = ['workers', 'limit-req', 'conn', 'sliding', 'window', 'bucket1'][int(0, 5)];
        const latencyMs = Math.round(between(0, 300));
        let limiter: SimLimiter | undefined;
        let extra: Partial<SimSite> = {};
        if (kind === 'workers')
            limiter = { kind: 'workers', workers: int(1, 4), serviceMs: Math.round(between(50, 300)) };
        else if (kind === 'limit-req')
            limiter = { kind: 'limit-req', rate: between(2, 15), burst: int(0, 10), nodelay: r() < 0.5 };
        else if (kind === 'conn') limiter = { kind: 'conn', max: int(1, 4) };
        else if (kind === 'sliding') limiter = { kind: 'sliding', limit: int(20, 100), periodMs: 10_000 };
        else if (kind === 'window') {
            const headers = (['draft-8', 'legacy', 'github', 'none'] as const)[int(0, 3)];
            limiter = { kind: 'window', limit: int(10, 60), windowMs: int(5, 20) * 1000, headers };
        } else extra = { rate: between(1, 15), burst: 1, refusal: { status: 429, retryAfter: 'seconds' } };
        sites.push({
            host: `k${seed}-s${i}.example`,
            latencyMs: kind === 'conn' ? Math.max(100, latencyMs) : latencyMs,
            limiter,
            ...extra,
        });
        names.push(kind);
    }
    return { sites, pages: long ? 500 : 40, kind: names.join('+') };
}

test('sim family', async () => {
    const rows: { seed: number; ratio: number; refused: number; worstSite: number; response: number }[] = [];
    // Sites over the goal's two refusals, of those sending no RateLimit headers; refusals and requests in all.
    // And sites whose first refusal named a wait of 2 s or more, and those of them refused more than once.
    const tally = { sites: 0, overTwo: 0, refused: 0, sent: 0, longWait: 0, longWaitOverOne: 0, long: [] as number[] };
    const bench = drawMixes(first, count);
    for (let i = 0; i < count; i++) {
        const seed = first + i;
        const mix =
            seed % 2 === 0
                ? { sites: bench[i].sites.map(asRealLimiter), pages: bench[i].pages, kind: `bucket-${bench[i].kind}` }
                : drawKinds(seed);
        if (process.env.PRINT) console.log(JSON.stringify(mix.sites));
        const cap = 900_000;
        const r = await simulateCrawl(mix.sites, mix.pages, {}, 40, cap);
        const o = await simulateOracle(mix.sites, mix.pages, 40, cap);
        const refusedAt = new Map([...r.arrivals].map(([host, l]) => [host, l.filter((a) => a.refused).length]));
        const perSite = [...refusedAt.values()];
        for (const site of mix.sites) {
            if (process.env.PRINT_SITES) {
                const kind =
                    (site.limiter?.kind === 'window' ? `window ${site.limiter.headers}` : site.limiter?.kind) ??
                    `bucket burst ${site.burst ?? 1} ${site.refusal?.retryAfter ?? 'seconds'}`;
                console.log(
                    `SITE ${seed} ${site.host} ${kind} refused ${refusedAt.get(site.host)} ${JSON.stringify(site)}`,
                );
            }
            // A bucket site the family turned into the fixed window its headers describe is held to that window.
            const trueRate =
                site.limiter?.kind === 'window' ? (site.limiter.limit * 1000) / site.limiter.windowMs : site.rate;
            if (mix.pages >= MIX_RANGES.longPages && trueRate !== undefined) {
                // The second half of the site's arrivals: accepted ones a second over its true rate.
                const list = r.arrivals.get(site.host)!;
                const late = list.slice(Math.floor(list.length / 2));
                const share = lateAcceptedPerSecond(list) / trueRate;
                const refused = late.filter((a) => a.refused).length / late.length;
                // The oracle beside it, told the rate: what a crawl that knows the limit keeps to.
                const told = lateAcceptedPerSecond(o.arrivals.get(site.host)!) / trueRate;
                tally.long.push(share);
                console.log(
                    `LONG ${seed} ${site.host} late ${(share * 100).toFixed(0)} % of the rate, ${(refused * 100).toFixed(1)} % refused (oracle ${(told * 100).toFixed(0)} %)`,
                );
            }
            const headers = site.limiter?.kind === 'window' && site.limiter.headers !== 'none';
            if (headers) continue;
            const first = r.arrivals.get(site.host)!.find((a) => a.refused);
            if (first && first.retryAfterMs >= 2_000) {
                tally.longWait += 1;
                if (refusedAt.get(site.host)! > 1) tally.longWaitOverOne += 1;
                if (process.env.PRINT_SITES)
                    console.log(`LONGWAIT ${seed} ${site.host} refused ${refusedAt.get(site.host)}`);
            }
            tally.sites += 1;
            if (refusedAt.get(site.host)! > 2) tally.overTwo += 1;
            if (process.env.PRINT_OVER && refusedAt.get(site.host)! > 2) {
                const list = r.arrivals.get(site.host)!;
                const start = list[0]?.at ?? 0;
                const refusals = list
                    .map((a, n) => (a.refused ? `#${n}@${((a.at - start) / 1000).toFixed(2)}/${a.inFlight}` : ''))
                    .filter(Boolean);
                console.log(`OVER ${seed} ${site.host} ${JSON.stringify(site)} ${refusals.join(' ')}`);
            }
        }
        tally.refused += r.refused;
        tally.sent += r.sent;
        const responses = [...r.responseRatio.values()].filter(Number.isFinite);
        const row = {
            seed,
            ratio: r.makespanMs / o.makespanMs,
            refused: r.refusedShare,
            worstSite: Math.max(...perSite),
            response: Math.max(...responses, 0),
        };
        rows.push(row);
        console.log(
            `${seed} ${mix.kind} ${mix.pages}p done ${r.done}/${r.pages} ratio ${row.ratio.toFixed(2)} (${(r.makespanMs / 1000).toFixed(1)} s, oracle ${(o.makespanMs / 1000).toFixed(1)} s) refused ${(row.refused * 100).toFixed(1)}% most/site ${row.worstSite} response ${row.response.toFixed(2)}x`,
        );
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const summary = (label: string, list: typeof rows) => {
        if (list.length === 0) return;
        const ratios = list.map((x) => x.ratio);
        const refused = list.map((x) => x.refused);
        console.log(
            `SUMMARY ${label} n=${list.length} ratio median ${med(ratios).toFixed(2)} worst ${Math.max(...ratios).toFixed(2)} | refused median ${(med(refused) * 100).toFixed(1)}% worst ${(Math.max(...refused) * 100).toFixed(1)}% | response worst ${Math.max(...list.map((x) => x.response)).toFixed(2)}x | mixes >1.3x ${ratios.filter((x) => x > 1.3).length}`,
        );
    };
    summary('all', rows);
    console.log(
        `SUMMARY sites without headers ${tally.sites}, over 2 refusals ${tally.overTwo} | first wait >= 2 s ${tally.longWait}, over 1 refusal ${tally.longWaitOverOne} | family refused ${((tally.refused / tally.sent) * 100).toFixed(2)}% (${tally.refused}/${tally.sent})`,
    );
    if (tally.long.length)
        console.log(
            `SUMMARY long crawls' sites ${tally.long.length}, at 90 % of the rate or more ${tally.long.filter((x) => x >= 0.9).length}, worst ${(Math.min(...tally.long) * 100).toFixed(0)} %`,
        );
    summary(
        'bucket',
        rows.filter((_, i) => i % 2 === 0),
    );
    summary(
        'kinds',
        rows.filter((_, i) => i % 2 === 1),
    );
}, 3_600_000);
