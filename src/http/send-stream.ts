import type { Readable } from 'node:stream';
import type { Response } from 'express';

/**
 * Pipes a stored file to the response and settles when either side ends: a
 * read error cuts the response (its headers are already sent), a client
 * that goes away stops the read. Never rejects, so a handler awaiting it
 * cannot leak an error after the response started.
 */
export function sendStream(stream: Readable, res: Response): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.on('error', () => {
      res.destroy();
      resolve();
    });
    res.on('close', () => {
      stream.destroy();
      resolve();
    });
    stream.pipe(res);
  });
}
