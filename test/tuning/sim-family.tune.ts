/**
 * Tuning runner (not part of `npm test`): B5's family of mixes in the simulation, seeds from the
 * environment. `SEEDS=1000:60 npx jest --testMatch '**\/*.tune.ts' test/tuning` prints one line per mix
 * and the median / worst; tune on 1000–1059 only, judge on the docs' and smoke run's seeds.
 */
import { drawMixes } from '../../packages/bench/src/mixes';
import { simulateCrawl } from '../helpers/rate-limited-sim';

const [first, count] = (process.env.SEEDS ?? '1000:60').split(':').map(Number);
const options = JSON.parse(process.env.OPTIONS ?? '{}');

test('sim family', async () => {
    const rows: { seed: number; ratio: number; refused: number; done: number }[] = [];
    for (const mix of drawMixes(first, count)) {
        const cap = mix.obedientIdealMs * 8 + 60_000;
        const r = await simulateCrawl(mix.sites, mix.pages, { ...options }, 40, cap);
        const row = {
            seed: mix.seed,
            ratio: r.makespanMs / mix.obedientIdealMs,
            refused: r.refusedShare,
            done: r.done / r.pages,
        };
        if (process.env.TRACE) {
            for (const [host, list] of r.arrivals) {
                const t0 = list[0]?.at ?? 0;
                console.log(
                    host,
                    list.map((a) => `${((a.at - t0) / 1000).toFixed(2)}${a.refused ? 'R' : ''}`).join(' '),
                );
            }
        }
        if (process.env.SITES) {
            // Per site: requests sent, refused, and the refusals' times (s from the site's first request).
            for (const [host, list] of r.arrivals) {
                const refused = list.filter((a) => a.refused);
                if (refused.length === 0) continue;
                const t0 = list[0]?.at ?? 0;
                const site = mix.sites.find((s) => s.host === host);
                console.log(
                    `  ${host} ${site?.rate}/${site?.burst}/${site?.latencyMs}/${site?.refusal?.status}-${site?.refusal?.retryAfter}-${site?.refusal?.rateLimitHeaders}`,
                    `sent ${list.length} refused ${refused.length} at ${refused.map((a) => ((a.at - t0) / 1000).toFixed(2)).join(' ')}`,
                );
            }
        }
        rows.push(row);
        const sites = mix.sites
            .map(
                (s) =>
                    `${s.rate}/${s.burst}/${s.latencyMs}/${s.refusal!.status}-${s.refusal!.retryAfter}-${s.refusal!.rateLimitHeaders}`,
            )
            .join(' ');
        console.log(
            `${mix.seed} ${mix.kind} ${mix.pages}p ratio ${row.ratio.toFixed(2)} refused ${(row.refused * 100).toFixed(1)}% done ${(row.done * 100).toFixed(0)}% | ${sites}`,
        );
    }
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const med = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
    const ratios = rows.map((r) => r.ratio);
    const refused = rows.map((r) => r.refused);
    console.log(
        `SUMMARY ratio median ${med(ratios).toFixed(2)} worst ${Math.max(...ratios).toFixed(2)} | refused median ${(med(refused) * 100).toFixed(1)}% worst ${(Math.max(...refused) * 100).toFixed(1)}% | over1.3 ${ratios.filter((x) => x > 1.3).length} over5% ${refused.filter((x) => x > 0.05).length} incomplete ${rows.filter((r) => r.done < 1).length}`,
    );
}, 3_600_000);
