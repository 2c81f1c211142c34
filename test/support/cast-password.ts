/** The password of every user of the test cast (test/support/server.ts). */
export const CAST_PASSWORD = 'correct-horse-battery';
