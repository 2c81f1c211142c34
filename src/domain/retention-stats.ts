/**
 * What this process's retention archiver did since it started (metrics).
 * Here rather than beside the archiver (src/actions/retention.ts) because the
 * application context holds one, and the context may not import an action.
 */
export class RetentionStats {
  archived = 0;
  /** Archived messages deleted for good past the grace period. */
  vacuumed = 0;
  runs = { done: 0, lease_held: 0, failed: 0 };
}
