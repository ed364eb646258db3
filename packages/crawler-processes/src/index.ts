export { runWorker } from './run-worker';
export type { WorkerRun } from './run-worker';
export { serveWorker } from './serve-worker';
export { redisAnswers } from './redis-answers';
