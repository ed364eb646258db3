export { runBenchmarks, benchmarkSizes, resolveOut, SCENARIO_IDS } from './run-benchmarks';
export type { BenchmarkOptions, BenchmarkResults, ScenarioId } from './run-benchmarks';
export { parseBenchArgs } from './cli-args';
export type { ContenderId, ContenderResult, CrawlScenario, ScenarioResult } from './crawl-scenarios';
export type { OverheadMeasurement, OverheadRow } from './overhead';
export type { PromptnessRow } from './promptness';
