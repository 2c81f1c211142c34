import { sharp } from './sharp';
import { badImage } from '../domain/avatars';

/** Images larger than this many pixels are refused before decoding (a decompression bomb). */
const MAX_INPUT_PIXELS = 50_000_000;

/**
 * A square PNG of `size` pixels from any image sharp reads: turned upright
 * per its EXIF orientation, cropped around the centre and scaled (up or
 * down) to exactly that size, as Zulip's resize_avatar; the first frame of
 * an animation. Anything that does not decode, or takes longer than
 * `timeoutSeconds`, is Zulip's "Could not decode image" refusal.
 */
export async function squarePng(input: Buffer, size: number, timeoutSeconds: number): Promise<Buffer> {
  try {
    return await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize(size, size, { fit: 'cover', position: 'centre' })
      .png()
      .timeout({ seconds: timeoutSeconds })
      .toBuffer();
  } catch {
    throw badImage();
  }
}
