export { runWorker } from './run-worker';
export type { WorkerRun } from './run-worker';
export { serveWorker } from './serve-worker';
export { redisAnswers } from './redis-answers';
export { memoryConfig } from './memory-config';
export { processStorage } from './process-storage';
export type { ProcessRedis, ProcessStorage } from './process-storage';
export { labelHeader } from './label-header';
export { waitForStart } from './wait-for-start';
