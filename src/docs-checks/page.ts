// One Markdown or MDX page: does it parse, its front matter, its headings and ids, and what it links to.
// Markdown goes through remark (CommonMark + GFM), MDX through the MDX compiler (compiled, never evaluated),
// front matter through `yaml`. Pure.
import { compile } from '@mdx-js/mdx';
import type { Program } from 'estree';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import remarkMdx from 'remark-mdx';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { parse as parseYaml, YAMLParseError } from 'yaml';

export interface Position {
  line: number;
  column: number;
}

export interface PageRef extends Position {
  url: string;
  kind: 'link' | 'image' | 'import';
}

export interface PageHeading extends Position {
  /** The heading's text, without an explicit `{#id}`. */
  text: string;
  /** `{#id}` (Docusaurus, MkDocs attr_list) when given. */
  explicitId: string | null;
}

export interface ParsedPage {
  parseError: (Position & { message: string }) | null;
  /** null: the page has no front matter. */
  frontMatter: { data: unknown; error: (Position & { message: string }) | null } | null;
  headings: PageHeading[];
  /** Ids given by HTML or JSX elements (`id=`, `<a name=>`). */
  ids: Set<string>;
  refs: PageRef[];
}

export function isPagePath(p: string): boolean {
  return /\.(md|mdx|markdown)$/i.test(p);
}

interface Node {
  type: string;
  value?: string;
  url?: string;
  depth?: number;
  children?: Node[];
  attributes?: Array<{ type: string; name?: string; value?: unknown }>;
  position?: { start: { line: number; column: number } };
  data?: { estree?: Program };
}

const at = (node: Node): Position => ({ line: node.position?.start.line ?? 0, column: node.position?.start.column ?? 0 });

function textOf(node: Node): string {
  let out = '';
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'text' || n.type === 'inlineCode') out += n.value ?? '';
    if (n.children) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

const EXPLICIT_ID = /\{\s*#([\w.:-]+)[^{}]*\}\s*$/;
const HTML_ID = /\b(?:id|name)\s*=\s*["']([^"']+)["']/gi;
const HTML_REF = /\b(href|src)\s*=\s*["']([^"']+)["']/gi;

function frontMatterOf(node: Node | undefined): ParsedPage['frontMatter'] {
  if (node?.type !== 'yaml') return null;
  const offset = (node.position?.start.line ?? 1) + 1;
  try {
    const data = parseYaml(node.value ?? '', { maxAliasCount: 100 }) as unknown;
    if (data !== null && data !== undefined && (typeof data !== 'object' || Array.isArray(data))) {
      return { data, error: { line: offset, column: 1, message: 'front matter must be a mapping of fields (key: value)' } };
    }
    return { data: data ?? {}, error: null };
  } catch (err) {
    const pos = err instanceof YAMLParseError ? err.linePos?.[0] : undefined;
    const message = (err as Error).message.split('\n')[0] ?? 'invalid YAML';
    return { data: null, error: { line: offset + (pos ? pos.line - 1 : 0), column: pos?.col ?? 1, message } };
  }
}

function collect(tree: Node, page: ParsedPage): void {
  const stack: Node[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    switch (node.type) {
      case 'heading': {
        const raw = textOf(node);
        const m = EXPLICIT_ID.exec(raw);
        page.headings.push({ text: m ? raw.slice(0, m.index).trimEnd() : raw, explicitId: m ? m[1]! : null, ...at(node) });
        break;
      }
      case 'link':
      case 'definition':
        page.refs.push({ url: node.url ?? '', kind: 'link', ...at(node) });
        break;
      case 'image':
        page.refs.push({ url: node.url ?? '', kind: 'image', ...at(node) });
        break;
      case 'html':
        for (const m of (node.value ?? '').matchAll(HTML_ID)) page.ids.add(m[1]!);
        for (const m of (node.value ?? '').matchAll(HTML_REF))
          page.refs.push({ url: m[2]!, kind: m[1]!.toLowerCase() === 'src' ? 'image' : 'link', ...at(node) });
        break;
      case 'mdxJsxFlowElement':
      case 'mdxJsxTextElement':
        for (const a of node.attributes ?? []) {
          if (a.type !== 'mdxJsxAttribute' || typeof a.value !== 'string') continue;
          if (a.name === 'id' || a.name === 'name') page.ids.add(a.value);
          if (a.name === 'href') page.refs.push({ url: a.value, kind: 'link', ...at(node) });
          if (a.name === 'src') page.refs.push({ url: a.value, kind: 'image', ...at(node) });
        }
        break;
      case 'mdxjsEsm':
        for (const s of node.data?.estree?.body ?? []) {
          const source = 'source' in s && s.source && typeof s.source.value === 'string' ? s.source.value : null;
          if (source)
            page.refs.push({
              url: source,
              kind: 'import',
              line: (s.loc?.start.line ?? at(node).line) || at(node).line,
              column: (s.loc?.start.column ?? 0) + 1,
            });
        }
        break;
    }
    if (node.children) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
}

/** The MDX compiler's verdict on a page: null when it compiles, else where and why it does not. */
async function mdxError(text: string): Promise<ParsedPage['parseError']> {
  try {
    await compile(text, { remarkPlugins: [remarkFrontmatter, remarkGfm] });
    return null;
  } catch (err) {
    const e = err as { line?: number; column?: number; reason?: string; message?: string };
    const message = (e.reason ?? e.message ?? String(err)).split('\n')[0]!;
    // Some messages carry their place only in the text: "Expected a closing tag for `<Card>` (7:1-7:17)".
    const inText = /\((\d+):(\d+)(?:-\d+:\d+)?\)/.exec(message);
    return { line: e.line ?? Number(inText?.[1] ?? 0), column: e.column ?? Number(inText?.[2] ?? 0), message };
  }
}

/**
 * `## Title {#id}` with its braces escaped, as Docusaurus does before MDX sees it (else `{#id}` would be a
 * JavaScript expression). Lines stay where they were, so line numbers hold. Pure.
 */
export function escapeHeadingIds(text: string): string {
  return text.replace(/^([ \t]{0,3}#{1,6}[ \t].*?)\{#([\w.:-]+)\}([ \t]*)$/gm, (_m, head: string, id: string, tail: string) => `${head}\\{#${id}\\}${tail}`);
}

/** Parses a page: as MDX when `mdx` (with Docusaurus' `{#id}` headings when `headingIds`), else as CommonMark with GFM. */
export async function parsePage(source: string, mdx: boolean, headingIds = false): Promise<ParsedPage> {
  const text = mdx && headingIds ? escapeHeadingIds(source) : source;
  const page: ParsedPage = { parseError: null, frontMatter: null, headings: [], ids: new Set(), refs: [] };
  if (mdx) {
    page.parseError = await mdxError(text);
    if (page.parseError) return page;
  }
  const processor = mdx
    ? unified().use(remarkParse).use(remarkMdx).use(remarkFrontmatter).use(remarkGfm)
    : unified().use(remarkParse).use(remarkFrontmatter).use(remarkGfm);
  const tree = processor.parse(text) as Node;
  page.frontMatter = frontMatterOf(tree.children?.[0]);
  collect(tree, page);
  return page;
}
