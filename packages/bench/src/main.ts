#!/usr/bin/env node
import { parseBenchArgs, USAGE } from './cli-args';
import { runBenchmarks } from './run-benchmarks';

async function main(): Promise<void> {
    let options;
    try {
        options = parseBenchArgs(process.argv.slice(2));
    } catch (error) {
        process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
        process.exitCode = 2;
        return;
    }
    if (options.help) {
        process.stdout.write(`${USAGE}\n`);
        return;
    }
    const { help: _help, ...benchOptions } = options;
    const results = await runBenchmarks(benchOptions);
    process.stdout.write(results.markdown);
}

main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
});
