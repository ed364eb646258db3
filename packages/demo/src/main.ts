#!/usr/bin/env node
import { parseDemoArgs, USAGE } from './cli-args';
import { DemoSetupError, runDemo } from './demo';

async function main(): Promise<void> {
    let options;
    try {
        options = parseDemoArgs(process.argv.slice(2));
    } catch (error) {
        process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
        process.exitCode = 2;
        return;
    }
    if (options.help) {
        process.stdout.write(`${USAGE}\n`);
        return;
    }
    const { help: _help, ...demoOptions } = options;
    await runDemo(demoOptions);
}

main().catch((error: unknown) => {
    if (error instanceof DemoSetupError) {
        process.stderr.write(`${error.message}\n`);
        process.exitCode = 2;
        return;
    }
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
});
