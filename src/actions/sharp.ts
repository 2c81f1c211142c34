import type Sharp from 'sharp';

let loaded: typeof Sharp | undefined;

/**
 * sharp, loaded on the first image rather than at start: loading it (libvips
 * and its bindings) took a tenth of a restart, and most starts serve no image
 * work for a while (ADR 0030).
 */
export function sharp(...args: Parameters<typeof Sharp>): ReturnType<typeof Sharp> {
  if (!loaded) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = require('sharp') as typeof Sharp;
    // One libvips thread per image (its default is one per core): with one job at a time
    // (src/actions/image-queue.ts), image work never takes more than one core.
    loaded.concurrency(1);
  }
  return loaded(...args);
}
