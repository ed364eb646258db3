import { RESULT_PREFIX } from './worker-protocol';

/**
 * The worker's side of `runWorker`: runs `main` on the task found in `envName` and prints its
 * result as one `RESULT {...}` line; an error goes to stderr with exit code 1 (no result line).
 */
export function serveWorker<Task, Result>(envName: string, main: (task: Task) => Promise<Result>): void {
    main(JSON.parse(process.env[envName] ?? '{}') as Task).then(
        (result) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`),
        (error: unknown) => {
            process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
            process.exitCode = 1;
        },
    );
}
