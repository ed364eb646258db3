export { DemoSetupError, runDemo } from './demo';
export type { DemoOptions, DemoResult } from './demo';
export { parseDemoArgs } from './cli-args';
export type { CrawlRun, TimelineEntry, BackoffPeriod } from './crawl';
export { demoSites } from './sites';
export type { DemoSite } from './sites';
export { renderReport } from './report';
