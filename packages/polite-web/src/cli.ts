#!/usr/bin/env node
import { CLI_USAGE, parseCliArgs } from './cli-args';
import { formatScoreTable } from './format-score-table';
import { startPoliteWeb } from './polite-web';

async function main(): Promise<void> {
    let command;
    try {
        command = parseCliArgs(process.argv.slice(2));
    } catch (error) {
        console.error(`${(error as Error).message}\n\n${CLI_USAGE}`);
        process.exitCode = 2;
        return;
    }
    if (command.help) {
        console.log(CLI_USAGE);
        return;
    }

    const web = await startPoliteWeb(command.options);
    console.log(`polite-web listening; proxy URL: ${web.proxyUrl}`);
    for (const site of web.sites) {
        const limit = site.rate === undefined ? 'unlimited' : `${site.rate}/s burst ${site.burst}`;
        console.log(`  ${web.url(site.host)}  (${limit}, ${site.pages} pages)`);
    }
    console.log('Press Ctrl-C to stop and print the score.');

    let stopping = false;
    const stop = async (): Promise<void> => {
        // A second Ctrl-C while closing should still get the user out.
        if (stopping) process.exit(130);
        stopping = true;
        const score = web.score();
        await web.close();
        console.log(`\n${formatScoreTable(score)}`);
        process.exit(0);
    };
    process.on('SIGINT', () => void stop());
    process.on('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
