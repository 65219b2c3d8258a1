// zstd for segment payloads, through node:zlib. Pure: no I/O.
//
// Node's zstd API (zlib.zstdCompressSync / zstdDecompressSync, since 22.15 and 23.8) is still marked
// "Stability: 1 – Experimental" in the Node 24 and 25 docs; it prints no warning and needs no flag. What that
// risks is the JavaScript call shape changing in a later Node, not the stored bytes: a zstd frame is the
// format of RFC 8878, which any zstd decoder reads. So the two calls live here and nowhere else, a Node
// without them fails with a clear error, and the segment header names its compression, so another codec can
// be added beside zstd without touching stored segments.
//
// Decompressing hostile bytes is bounded: the output may not exceed the length the header declares (itself
// capped by the codec), and the window a frame may ask for is capped at 2^WINDOW_LOG_MAX bytes (levels up to
// MAX_LEVEL never use a larger one).
import zlib from 'node:zlib';
import { SegmentFormatError } from './bytes.ts';

interface ZstdOptions {
  params?: Record<number, number>;
  maxOutputLength?: number;
}
interface ZstdApi {
  zstdCompressSync(buf: Uint8Array, options?: ZstdOptions): Buffer;
  zstdDecompressSync(buf: Uint8Array, options?: ZstdOptions): Buffer;
}

const api = zlib as unknown as Partial<ZstdApi>;
const constants = zlib.constants as unknown as Record<string, number>;

/** Highest compression level accepted: levels up to 19 use a window of at most 2^23 bytes. */
export const MAX_LEVEL = 19;
/** Largest window (log2 bytes) a frame may ask the decompressor for. */
const WINDOW_LOG_MAX = 23;

function zstd(): ZstdApi {
  if (typeof api.zstdCompressSync !== 'function' || typeof api.zstdDecompressSync !== 'function')
    throw new Error(`analytics segments need zstd in node:zlib (Node.js 22.15 or later; this is ${process.version})`);
  return api as ZstdApi;
}

export function zstdCompress(body: Uint8Array, level: number): Uint8Array {
  if (!Number.isInteger(level) || level < 1 || level > MAX_LEVEL) throw new RangeError(`zstd level must be an integer from 1 to ${MAX_LEVEL}`);
  const out = zstd().zstdCompressSync(body, {
    params: { [constants.ZSTD_c_compressionLevel as number]: level, [constants.ZSTD_c_checksumFlag as number]: 0 },
  });
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** Decompresses a payload that must expand to exactly `length` bytes. */
export function zstdDecompress(payload: Uint8Array, length: number): Uint8Array {
  let out: Buffer;
  try {
    out = zstd().zstdDecompressSync(payload, {
      maxOutputLength: Math.max(1, length),
      params: { [constants.ZSTD_d_windowLogMax as number]: WINDOW_LOG_MAX },
    });
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('analytics segments need zstd')) throw err;
    throw new SegmentFormatError(`payload: zstd refused it (${err instanceof Error ? err.message : String(err)})`);
  }
  if (out.byteLength !== length) throw new SegmentFormatError(`payload: expands to ${out.byteLength} bytes, the header says ${length}`);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
