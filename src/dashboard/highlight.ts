// Syntax highlighting of diff lines: highlight.js core with the few languages docs repositories are made of
// (Markdown/MDX, YAML, JSON, JavaScript/TypeScript, shell, diffs), chosen by file extension. Its output is
// HTML in which the text is escaped and only <span class="hljs-…"> is added.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import diff from 'highlight.js/lib/languages/diff';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import typescript from 'highlight.js/lib/languages/typescript';
import yaml from 'highlight.js/lib/languages/yaml';

for (const [name, language] of Object.entries({ bash, diff, javascript, json, markdown, typescript, yaml })) hljs.registerLanguage(name, language);

const BY_EXTENSION: Record<string, string> = {
  md: 'markdown',
  mdx: 'markdown',
  markdown: 'markdown',
  yml: 'yaml',
  yaml: 'yaml',
  json: 'json',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  sh: 'bash',
  bash: 'bash',
  diff: 'diff',
  patch: 'diff',
};

/** The registered language of a file, by its extension (undefined: shown as plain text). */
export function languageOf(path: string): string | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return ext ? BY_EXTENSION[ext] : undefined;
}

/** One line of code as highlighted HTML (escaped text in hljs spans). */
export function highlightLine(text: string, language: string): string {
  return hljs.highlight(text, { language, ignoreIllegals: true }).value;
}
