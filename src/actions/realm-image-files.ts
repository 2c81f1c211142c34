import type { AppContext } from '../context';

/** The bytes of a stored file (an organization image's original, to resize). */
export async function readStored(ctx: AppContext, key: string): Promise<Buffer> {
  const stream = await ctx.storage.read(key);
  if (!stream) throw new Error(`stored image ${key} vanished`);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Stores `bytes` under `key`, published only once complete. */
export async function storeBytes(ctx: AppContext, key: string, bytes: Buffer): Promise<void> {
  const file = await ctx.storage.create();
  file.stream.end(bytes);
  await file.commit(key);
}
