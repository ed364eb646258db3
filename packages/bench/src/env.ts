import { readFileSync } from 'node:fs';
import { cpus, platform, arch, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The machine and versions a benchmark run happened on. */
export interface Environment {
    date: string;
    node: string;
    cpuModel: string;
    cores: number;
    platform: string;
    memoryGb: number;
    crawlee: string;
}

function crawleeVersion(): string {
    try {
        const main = require.resolve('@crawlee/core');
        let dir = dirname(main);
        for (let i = 0; i < 4; i++) {
            try {
                const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
                    name?: string;
                    version?: string;
                };
                if (pkg.name === '@crawlee/core' && pkg.version) return pkg.version;
            } catch {
                // keep looking upwards
            }
            dir = dirname(dir);
        }
    } catch {
        // not resolvable
    }
    return 'unknown';
}

export function environment(now = new Date()): Environment {
    const list = cpus();
    return {
        date: now.toISOString(),
        node: process.version,
        cpuModel: (list[0]?.model ?? 'unknown').trim().replace(/\s+/g, ' '),
        cores: list.length,
        platform: `${platform()} ${arch()}`,
        memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
        crawlee: crawleeVersion(),
    };
}

/** The monorepo root (this file lives in packages/bench/src or packages/bench/dist). */
export const REPO_ROOT = resolve(__dirname, '..', '..', '..');
