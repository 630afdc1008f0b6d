/** contest-sync's lambda/ code imports the single-execution runtime through this one file. */
export * from '@contest-sync/scheduled-singleton';
