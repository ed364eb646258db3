import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The published package: built to dist/ (npm test builds first), usable from require and import.
const pkg = join(__dirname, '../../packages/throttling');

describe('crawlee-throttling as published', () => {
    beforeAll(() => {
        if (!existsSync(join(pkg, 'dist/index.js')))
            throw new Error('packages/throttling is not built: run `npm run build` (npm test does)');
    });

    test('require() finds the public API and its type declarations exist', () => {
        const out = execFileSync(
            process.execPath,
            [
                '-e',
                `const m = require(${JSON.stringify(pkg)}); console.log(typeof m.ThrottlingRequestManager, typeof m.PersistentRateLimitError, typeof m.seededRandom)`,
            ],
            {
                encoding: 'utf8',
            },
        );
        expect(out.trim()).toBe('function function function');
        expect(existsSync(join(pkg, 'dist/index.d.ts'))).toBe(true);
    });

    test('import finds the same API through the ESM entry', () => {
        const entry = join(pkg, 'dist/index.mjs');
        const out = execFileSync(
            process.execPath,
            [
                '--input-type=module',
                '-e',
                `import { ThrottlingRequestManager, ManualClock } from ${JSON.stringify(entry)}; console.log(typeof ThrottlingRequestManager, typeof ManualClock)`,
            ],
            { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
        );
        expect(out.trim()).toBe('function function');
    });
});

describe('crawlee-throttling/types as published', () => {
    test('resolves from require and import, with declarations, and carries no values', () => {
        const cjs = execFileSync(
            process.execPath,
            ['-e', `console.log(JSON.stringify(Object.keys(require('crawlee-throttling/types'))))`],
            { encoding: 'utf8', cwd: pkg },
        );
        expect(JSON.parse(cjs.trim())).toEqual([]);
        expect(existsSync(join(pkg, 'dist/types.d.ts'))).toBe(true);
        const esm = execFileSync(
            process.execPath,
            [
                '--input-type=module',
                '-e',
                `import * as t from ${JSON.stringify(join(pkg, 'dist/types.mjs'))}; console.log(Object.keys(t).join(','))`,
            ],
            { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
        );
        expect(esm.trim()).toBe('default');
    });
});

describe('crawlee-throttling/redis as published', () => {
    // A copy of the built package where ioredis cannot be found: Node resolves bare names from the
    // package's own folder upwards, so a copy outside the repository sees no node_modules/ioredis.
    function withoutIoredis(script: string): string {
        const dir = mkdtempSync(join(tmpdir(), 'ct-no-ioredis-'));
        try {
            const copy = join(dir, 'node_modules', 'crawlee-throttling');
            cpSync(join(pkg, 'dist'), join(copy, 'dist'), { recursive: true });
            cpSync(join(pkg, 'package.json'), join(copy, 'package.json'));
            // Its other dependencies resolve from the repository through NODE_PATH; ioredis is hidden there.
            const modules = join(dir, 'deps');
            mkdirSync(modules);
            for (const name of readdirSync(join(pkg, '../../node_modules'))) {
                if (name === 'ioredis' || name.startsWith('.')) continue;
                symlinkSync(join(pkg, '../../node_modules', name), join(modules, name));
            }
            return execFileSync(process.execPath, ['-e', script], {
                cwd: dir,
                encoding: 'utf8',
                env: { ...process.env, NODE_OPTIONS: '', NODE_PATH: modules },
            });
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    }

    test('the main entry loads without ioredis; the Redis entry says what to install', () => {
        const out = withoutIoredis(`
            let hidden = false;
            try { require.resolve('ioredis'); } catch { hidden = true; }
            const main = require('crawlee-throttling');
            const redis = require('crawlee-throttling/redis');
            let message = '';
            try { new redis.RedisStorageClient({ url: 'redis://127.0.0.1:1' }); } catch (e) { message = e.code + ' ' + e.message; }
            console.log(JSON.stringify({ hidden, main: typeof main.ThrottlingRequestManager, message }));
        `);
        const { hidden, main, message } = JSON.parse(out.trim()) as Record<string, unknown>;
        expect(hidden).toBe(true);
        expect(main).toBe('function');
        expect(message).toMatch(/ERR_THROTTLING_REDIS_DRIVER_MISSING .*npm install ioredis/);
    });

    test('exports RedisStorageClient and RedisDomainClock from require and import', () => {
        const cjs = execFileSync(
            process.execPath,
            [
                '-e',
                `const r = require('crawlee-throttling/redis'); console.log(typeof r.RedisStorageClient, typeof r.RedisDomainClock)`,
            ],
            { encoding: 'utf8', cwd: pkg },
        );
        expect(cjs.trim()).toBe('function function');
        const entry = join(pkg, 'dist/redis.mjs');
        const esm = execFileSync(
            process.execPath,
            [
                '--input-type=module',
                '-e',
                `import { RedisStorageClient } from ${JSON.stringify(entry)}; console.log(typeof RedisStorageClient)`,
            ],
            { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
        );
        expect(esm.trim()).toBe('function');
    });
});
