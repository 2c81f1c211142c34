import { sharp } from './sharp';
import { badImage, EMOJI_SIZE } from '../domain/custom-emoji';

/** Zulip's IMAGE_BOMB_TOTAL_PIXELS: a larger image is refused before it is decoded. */
const MAX_INPUT_PIXELS = 90_000_000;

const FORMATS = { png: 'png', gif: 'gif', jpg: 'jpeg', webp: 'webp', avif: 'avif' } as const;

export interface EmojiImages {
  /** The image shrunk to fit EMOJI_SIZE square, in the uploaded format. */
  image: Buffer;
  /** For an animated image: its first frame as PNG (Zulip's still image); otherwise null. */
  still: Buffer | null;
}

/**
 * Zulip's resize_emoji: the image shrinks (never grows) to fit 64×64 with
 * its aspect ratio, keeping its format; every frame of an animated GIF or
 * WebP is resized, so the animation stays, and the first frame becomes a
 * still PNG. Anything libvips cannot decode, or that takes longer than
 * `timeoutSeconds` (each of the two images), is Zulip's "not an image" error.
 */
export async function resizeEmoji(original: Buffer, ext: keyof typeof FORMATS, timeoutSeconds: number): Promise<EmojiImages> {
  const timeout = { seconds: timeoutSeconds };
  const fit = { width: EMOJI_SIZE, height: EMOJI_SIZE, fit: 'inside', withoutEnlargement: true } as const;
  try {
    const meta = await sharp(original, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    const animated = (meta.pages ?? 1) > 1 && (ext === 'gif' || ext === 'webp');
    const image = await sharp(original, { animated, limitInputPixels: MAX_INPUT_PIXELS })
      .rotate()
      .resize(fit)
      .toFormat(FORMATS[ext])
      .timeout(timeout)
      .toBuffer();
    const still = animated
      ? await sharp(original, { pages: 1, limitInputPixels: MAX_INPUT_PIXELS }).resize(fit).png().timeout(timeout).toBuffer()
      : null;
    return { image, still };
  } catch {
    throw badImage('Could not decode image; did you upload an image file?');
  }
}
