// What the system prompt is made from, read from the job's worktree: the file list, the instruction files, the
// style guide and Vale config, and the docs navigation. Every read is confined to the worktree (ConfinedTree) and
// size-capped; the navigation is read the way the docs checks read it (no repository code runs).
import path from 'node:path';
import { DocsReader } from '../docs-checks/reader.ts';
import { loadSite } from '../docs-checks/run.ts';
import { ConfinedTree } from './confined-fs.ts';
import { INSTRUCTION_FILES, PROMPT_LIMITS, type RepoContext, STYLE_GUIDE_FILES, VALE_CONFIGS, valeStyles } from './prompt.ts';

/** Longest the navigation may take to read (a sidebars file is parsed, never run). */
const NAV_TIMEOUT_MS = 5_000;

/** The docs navigation of a worktree as an outline, read like the docs checks read it; null without one. */
async function readNavigation(root: string, files: readonly string[]): Promise<RepoContext['navigation']> {
  const reader = new DocsReader(
    root,
    { maxFiles: 4, maxBytes: 2 * 1024 * 1024, maxFileBytes: 1024 * 1024, maxListed: files.length },
    AbortSignal.timeout(NAV_TIMEOUT_MS),
  );
  try {
    const site = await loadSite(reader, new Set(files));
    const nav = site.navigation;
    return nav?.outline ? { file: nav.file, outline: nav.outline } : null;
  } catch {
    // A config that cannot be read in time, or at all: the prompt goes without it (the checks report it).
    return null;
  }
}

/** Largest instruction file (AGENTS.md, CONTRIBUTING…) the prompt takes; a larger one is left out. */
const INSTRUCTION_FILE_BYTES = 1024 * 1024;

/** Reads the file list, instruction files, style guide, Vale config and navigation of a worktree (confined, see `ConfinedTree`). */
export async function gatherRepoContext(root: string, maxFiles = 20_000): Promise<RepoContext> {
  const tree = new ConfinedTree(root);
  const { files } = await tree.list('.', maxFiles);
  files.sort();
  const instructions: RepoContext['instructions'] = [];
  const seenNames = new Set<string>();
  const listed = new Set(files);
  for (const name of INSTRUCTION_FILES) {
    const base = path.posix.basename(name);
    if (seenNames.has(base) || !listed.has(name)) continue;
    // Over the cap the read stops at cap + 1 bytes and fails (TooLargeError): the file is left out, unread.
    const read = await tree.read(name, INSTRUCTION_FILE_BYTES).catch(() => null);
    if (!read) continue;
    instructions.push({ path: name, content: read.content.toString('utf8') });
    seenNames.add(base);
  }
  const byLower = new Map(files.map((f) => [f.toLowerCase(), f]));
  let styleGuide: RepoContext['styleGuide'] = null;
  for (const candidate of STYLE_GUIDE_FILES) {
    const file = byLower.get(candidate.toLowerCase());
    if (!file) continue;
    const read = await tree.read(file, 1024 * 1024).catch(() => null);
    if (!read) continue;
    styleGuide = { path: file, content: read.content.toString('utf8') };
    break;
  }
  let vale: RepoContext['vale'] = null;
  const valeFile = VALE_CONFIGS.find((f) => listed.has(f));
  if (valeFile) {
    const read = await tree.read(valeFile, PROMPT_LIMITS.valeBytes).catch(() => null);
    if (read) vale = { file: valeFile, ...valeStyles(read.content.toString('utf8')) };
  }
  return { files, instructions, navigation: await readNavigation(root, files), styleGuide, vale };
}
