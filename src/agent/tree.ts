// The file tree of the system prompt: every file of a small repository; for a large one the root's files, folder
// counts two levels deep, and the files of the folders (and the files) whose names share a word with the request,
// listed in full. Bounded in lines and characters whatever the tree; file names are repository text, shown one
// per line with control characters replaced. Pure.

export const TREE_LIMITS = {
  /** Lines of the tree (besides its last line, the total). */
  lines: 200,
  /** Characters of the tree. */
  chars: 12_000,
  /** Up to this many files, every file is listed. */
  flat: 150,
  /** Root files listed before the rest are counted. */
  rootFiles: 30,
  /** Files listed because their names or folders share a word with the request. */
  relevant: 120,
  /** Files listed from one relevant folder. */
  perFolder: 60,
  /** One listed path, in characters. */
  pathChars: 200,
};

export type TreeLimits = typeof TREE_LIMITS;

/** Words that say nothing of where a change goes. */
const STOPWORDS = new Set(
  (
    'the and for with that this from into onto about what when where which who how why are was were will would should could can ' +
    'not but all any our your their its has have had was been being does did done make made please also just then than them they ' +
    'there here add adds added update updates updated change changes changed fix fixes fixed edit new page pages file files doc docs ' +
    'documentation section sections write rewrite use using some more most need needs want wants via per each every other'
  ).split(' '),
);

/** A word without a plural or verb ending, so "guides" meets "guide". Pure. */
function stem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('es') && /(ch|sh|x|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The words of a request worth matching against names (at most 40). Pure. */
export function requestWords(request: string): string[] {
  const words = new Set<string>();
  for (const raw of request.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length < 3 || STOPWORDS.has(raw) || /^\d+$/.test(raw)) continue;
    words.add(stem(raw));
    if (words.size >= 40) break;
  }
  return [...words];
}

/** The words of a file or folder name: split at separators and camelCase, lower-cased, stemmed. Pure. */
export function nameWords(name: string): string[] {
  return name
    .replace(/\.(mdx?|markdown|md|ya?ml|json|html?|rst|adoc|txt)$/i, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3)
    .map(stem);
}

/** Two words meet when equal, or when one begins the other and the shorter has at least 4 letters. Pure. */
export function wordsMeet(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 4 && long.startsWith(short);
}

/** A path as one prompt line: control characters replaced, clipped. Pure. */
export function pathLine(p: string, max: number = TREE_LIMITS.pathChars): string {
  const line = p.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, '?');
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** How many of `words` the names in `segments` meet (0: none); `wordsOf` is `nameWords`, remembered. */
function score(words: readonly string[], segments: readonly string[], wordsOf: (s: string) => string[]): number {
  let hits = 0;
  for (const w of words) if (segments.some((s) => wordsOf(s).some((n) => wordsMeet(w, n)))) hits++;
  return hits;
}

/**
 * The files worth listing in full for `words`: every file under a folder whose name meets a word, and every file
 * whose own name does, best match first (more words met, then deeper folders, then file order), at most
 * `limits.relevant` and `limits.perFolder` from one folder. Pure.
 */
export function relevantFiles(sorted: readonly string[], words: readonly string[], limits: TreeLimits = TREE_LIMITS): { files: string[]; more: number } {
  if (words.length === 0) return { files: [], more: 0 };
  const memo = new Map<string, string[]>();
  const wordsOf = (name: string) => {
    let w = memo.get(name);
    if (!w) {
      w = nameWords(name);
      memo.set(name, w);
    }
    return w;
  };
  const folderScore = new Map<string, number>();
  const scored: Array<{ file: string; score: number; folder: string; depth: number }> = [];
  for (const file of sorted) {
    const parts = file.split('/');
    let best = { score: 0, folder: '', depth: 0 };
    for (let d = 1; d < parts.length; d++) {
      const folder = parts.slice(0, d).join('/');
      let s = folderScore.get(folder);
      if (s === undefined) {
        // A folder counts when its own name meets a word; the words its parents meet add to it.
        s = score(words, [parts[d - 1]!], wordsOf) > 0 ? score(words, parts.slice(0, d), wordsOf) : 0;
        folderScore.set(folder, s);
      }
      if (s > 0 && (s > best.score || (s === best.score && d > best.depth))) best = { score: s, folder, depth: d };
    }
    const own = score(words, [parts.at(-1)!], wordsOf);
    if (own > 0) {
      const total = score(words, parts, wordsOf);
      if (total >= best.score) best = { score: total, folder: parts.slice(0, -1).join('/'), depth: parts.length };
    }
    if (best.score > 0) scored.push({ file, ...best });
  }
  scored.sort((a, b) => b.score - a.score || b.depth - a.depth || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const perFolder = new Map<string, number>();
  const files: string[] = [];
  let more = 0;
  for (const s of scored) {
    const n = perFolder.get(s.folder) ?? 0;
    if (files.length >= limits.relevant || n >= limits.perFolder) {
      more++;
      continue;
    }
    perFolder.set(s.folder, n + 1);
    files.push(s.file);
  }
  return { files: files.sort(), more };
}

/** A bounded view of the file list for a request: see the top of this file. Pure. */
export function compactTree(files: readonly string[], request = '', limits: TreeLimits = TREE_LIMITS): string {
  const sorted = [...files].sort();
  if (sorted.length <= limits.flat)
    return clipChars(
      sorted.map((f) => pathLine(f, limits.pathChars)),
      limits.chars,
    ).join('\n');
  const counts = new Map<string, number>();
  const rootFiles: string[] = [];
  for (const f of sorted) {
    const parts = f.split('/');
    if (parts.length === 1) {
      rootFiles.push(f);
      continue;
    }
    for (let d = 1; d <= Math.min(2, parts.length - 1); d++) {
      const dir = `${parts.slice(0, d).join('/')}/`;
      counts.set(dir, (counts.get(dir) ?? 0) + 1);
    }
  }
  const relevant = relevantFiles(sorted, requestWords(request), limits);
  const lines: string[] = rootFiles.slice(0, limits.rootFiles).map((f) => pathLine(f, limits.pathChars));
  if (rootFiles.length > limits.rootFiles) lines.push(`… ${rootFiles.length - limits.rootFiles} more files at the root`);
  const countLines = [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([dir, n]) => `${pathLine(dir, limits.pathChars)} (${n} file${n === 1 ? '' : 's'})`);
  const relevantLines =
    relevant.files.length > 0
      ? [
          'Listed in full, as their names or folders share words with the request:',
          ...relevant.files.map((f) => pathLine(f, limits.pathChars)),
          ...(relevant.more > 0 ? [`… ${relevant.more} more that share words with the request`] : []),
        ]
      : [];
  const room = Math.max(0, limits.lines - lines.length - relevantLines.length);
  lines.push(...countLines.slice(0, room));
  if (countLines.length > room) lines.push(`… ${countLines.length - room} more folders`);
  lines.push(...relevantLines);
  const shown = clipChars(lines, limits.chars);
  return `${shown.join('\n')}\n(${sorted.length} files in total; use list_files to see a directory)`;
}

/** The first lines that fit in `max` characters, with a line saying how many were left out. Pure. */
function clipChars(lines: readonly string[], max: number): string[] {
  let chars = 0;
  const out: string[] = [];
  for (const line of lines) {
    if (chars + line.length + 1 > max) {
      out.push(`… ${lines.length - out.length} more lines`);
      break;
    }
    out.push(line);
    chars += line.length + 1;
  }
  return out;
}
