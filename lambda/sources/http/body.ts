/**
 * A reply body read within its cap (docs/sources.md, "The HTTP layer"): a declared Content-Length
 * above the cap is refused before reading, the bytes are counted as they stream and the read stops
 * past the cap, and a compressed body may not decompress to more than the cap either (a small gzip
 * can hold gigabytes). A body above the cap is never parsed and never retried: the next reply
 * would be the same.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { AttemptFailure } from './policy.js';

const DECODERS = {
  gzip: promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
} as const;

type Encoding = keyof typeof DECODERS | 'identity';

/** What decoding a body is called in a message: `gunzips to more than …`. */
const VERBS: Record<keyof typeof DECODERS, string> = { gzip: 'gunzips', deflate: 'inflates', br: 'decompresses (br)' };

export function tooLarge(label: string, detail: string, maxBytes: number): AttemptFailure {
  const message = `${label} reply refused: its body ${detail}, above the ${maxBytes}-byte cap`;
  return new AttemptFailure({ kind: 'too-large', message, retryable: false });
}

/** The body's bytes as sent, at most `maxBytes`; `destroy` stops the transfer. */
export async function readCapped(
  body: AsyncIterable<unknown> & { destroy(): unknown },
  declaredLength: number,
  maxBytes: number,
  label: string,
): Promise<Buffer> {
  if (Number.isFinite(declaredLength) && declaredLength > maxBytes) {
    body.destroy();
    throw tooLarge(label, `declares ${declaredLength} bytes (Content-Length)`, maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > maxBytes) {
      body.destroy();
      throw tooLarge(label, `went past ${maxBytes} bytes while streaming`, maxBytes);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

function encodingOf(contentEncoding: string | undefined): Encoding | undefined {
  const value = (contentEncoding ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  return value === 'deflate' || value === 'br' ? value : undefined;
}

/** The body decompressed by its Content-Encoding, at most `maxBytes` once decompressed. */
export async function decompress(bytes: Buffer, contentEncoding: string | undefined, maxBytes: number, label: string): Promise<Buffer> {
  const encoding = encodingOf(contentEncoding);
  if (encoding === undefined) {
    const message = `${label} reply refused: unsupported Content-Encoding ${JSON.stringify((contentEncoding ?? '').slice(0, 40))}`;
    throw new AttemptFailure({ kind: 'http', message, retryable: false });
  }
  if (encoding === 'identity') return bytes;
  try {
    return await DECODERS[encoding](bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw tooLarge(label, `${VERBS[encoding]} to more than ${maxBytes} bytes (${bytes.length} bytes sent)`, maxBytes);
    }
    throw new Error(`corrupt ${encoding} body: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
