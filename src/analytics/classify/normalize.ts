// Path normalisation (SPEC 4.3). Pure: no I/O.
//
// normalizePath turns a path or absolute URL into the key a page view is counted under:
//   1. strip `scheme://authority` (absolute URLs only; a leading `//` is a path with repeated slashes),
//   2. cut the query (`?…`) and fragment (`#…`),
//   3. percent-decode (UTF-8). Escapes that would change the meaning of the result stay encoded,
//      upper-cased: `%25` (%), `%3F` (?), `%23` (#) and control characters. A lone `%` that starts no
//      valid escape becomes `%25`, and bytes that are not valid UTF-8 stay encoded. This keeps the
//      function idempotent: normalizePath(normalizePath(x)) === normalizePath(x),
//   4. collapse repeated slashes, 5. drop a trailing slash (except for `/`),
//   6. drop a `.md` / `.mdx` suffix (case-insensitive, repeatedly), so a Markdown fetch counts for its page,
//   7. ensure a leading `/`.
// Returns null for an empty path (e.g. '' or '?q' or '#x') or a result longer than 2,048 characters.
// Dot segments (`/a/../b`) are kept as sent: the spec does not ask for resolving them.

export const MAX_PATH_LENGTH = 2048;
/** Inputs longer than this are rejected before any work (the ingest schema bounds them too). */
const MAX_INPUT_LENGTH = 8192;

const SCHEME_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
const MARKDOWN_SUFFIX = /\.mdx?$/i;

/** Characters that are never decoded: decoding them would change how the path is re-read. */
function keepEncoded(codePoint: number): boolean {
  return codePoint === 0x25 || codePoint === 0x3f || codePoint === 0x23 || codePoint < 0x20 || codePoint === 0x7f;
}

function hex2(b: number): string {
  return `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

/** Length of the UTF-8 sequence started by lead byte b, or 0 when b cannot start one. */
function sequenceLength(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/** Decodes a run of percent-escaped bytes, keeping invalid UTF-8 and reserved characters encoded. */
function decodeBytes(bytes: number[]): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const n = sequenceLength(bytes[i]);
    if (n > 0 && i + n <= bytes.length) {
      let text: string | null = null;
      try {
        text = utf8.decode(Uint8Array.from(bytes.slice(i, i + n)));
      } catch {
        text = null;
      }
      if (text !== null) {
        const cp = text.codePointAt(0)!;
        out += keepEncoded(cp) ? hex2(bytes[i]) : text;
        i += n;
        continue;
      }
    }
    out += hex2(bytes[i]);
    i += 1;
  }
  return out;
}

/** Percent-decodes s per the rules above. Raw control characters are encoded. */
function percentDecode(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '%') {
      const bytes: number[] = [];
      while (s[i] === '%' && isHex(s[i + 1]) && isHex(s[i + 2])) {
        bytes.push(Number.parseInt(s.slice(i + 1, i + 3), 16));
        i += 3;
      }
      if (bytes.length > 0) {
        out += decodeBytes(bytes);
      } else {
        out += '%25'; // a lone '%' that starts no escape
        i += 1;
      }
      continue;
    }
    const code = c.charCodeAt(0);
    out += code < 0x20 || code === 0x7f ? hex2(code) : c;
    i += 1;
  }
  return out;
}

/** Splits an absolute URL or a path into its path part (without query and fragment). */
function pathPart(pathOrUrl: string): { path: string; absolute: boolean } {
  const m = SCHEME_AUTHORITY.exec(pathOrUrl);
  const rest = m ? pathOrUrl.slice(m[0].length) : pathOrUrl;
  const cut = rest.search(/[?#]/);
  return { path: cut === -1 ? rest : rest.slice(0, cut), absolute: m !== null };
}

export function normalizePath(pathOrUrl: string): string | null {
  if (typeof pathOrUrl !== 'string' || pathOrUrl.length > MAX_INPUT_LENGTH) return null;
  const { path: raw, absolute } = pathPart(pathOrUrl);
  if (raw === '' && !absolute) return null;
  let p = percentDecode(raw);
  p = `/${p}`.replace(/\/{2,}/g, '/');
  for (;;) {
    const before = p;
    if (p.length > 1 && p.endsWith('/')) p = p.replace(/\/+$/, '');
    if (MARKDOWN_SUFFIX.test(p)) p = p.replace(MARKDOWN_SUFFIX, '');
    if (p === '') p = '/';
    if (p === before) break;
  }
  if (p.length > MAX_PATH_LENGTH) return null;
  return p;
}

/** True when the requested path (before normalisation; query and fragment ignored) ends in .md or .mdx. */
export function isMarkdownPath(rawPath: string): boolean {
  if (typeof rawPath !== 'string') return false;
  return MARKDOWN_SUFFIX.test(pathPart(rawPath.trim()).path);
}

/** File extensions of static assets: requests for them are never page views. */
export const STATIC_ASSET_EXTENSIONS: readonly string[] = [
  // scripts, styles, source maps, WebAssembly
  'js',
  'mjs',
  'cjs',
  'css',
  'map',
  'wasm',
  // images
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'avif',
  'svg',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'apng',
  // fonts
  'woff',
  'woff2',
  'ttf',
  'otf',
  'eot',
  // audio / video
  'mp4',
  'webm',
  'ogg',
  'mp3',
  'wav',
  'm4a',
  'mov',
  // archives and app manifests
  'zip',
  'gz',
  'tgz',
  'br',
  'webmanifest',
];
const STATIC_RE = new RegExp(`\\.(?:${STATIC_ASSET_EXTENSIONS.join('|')})$`, 'i');

/**
 * True when the path (query and fragment ignored) names a static asset by its extension.
 * Documents an agent or person reads (.md, .txt such as llms.txt, .pdf, .json, .xml) are not assets.
 */
export function isStaticAsset(path: string): boolean {
  if (typeof path !== 'string') return false;
  return STATIC_RE.test(pathPart(path.trim()).path);
}
