/**
 * Runs a bench script's main and exits when it ends: 0 when it resolves, 1
 * with its error when it rejects. Exiting explicitly ends a run that left a
 * handle open (a pool, a child's pipe) instead of hanging after its report.
 */
export function runMain(main: () => Promise<void>): void {
  main().then(
    // Once what was written to stdout is out: a pipe (| less, | tee) takes it asynchronously.
    () => process.stdout.write('', () => process.exit(0)),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
