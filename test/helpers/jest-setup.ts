import { log, LogLevel } from '@crawlee/core';

// Crawlers log every start and finish at INFO; keep test output to what matters.
log.setLevel(LogLevel.WARNING);
