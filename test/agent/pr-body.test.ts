// The pull request's body and follow-up comment, parsed as GitHub-flavoured Markdown by remark: the request is
// one code block holding exactly its text, whatever it contains.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Root, RootContent } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { afterEach, describe, expect, it } from 'vitest';
import { followUpComment, MAX_TEMPLATE_BYTES, pullRequestBody, quoteAsData, readPullRequestTemplate } from '../../src/agent/pr-body.ts';
import type { DiffFile } from '../../src/git/diff.ts';

const parse = (md: string): Root => unified().use(remarkParse).use(remarkGfm).parse(md);

function nodes(tree: Root): RootContent[] {
  const out: RootContent[] = [];
  const walk = (n: { children?: RootContent[] }) => {
    for (const c of n.children ?? []) {
      out.push(c);
      walk(c as { children?: RootContent[] });
    }
  };
  walk(tree);
  return out;
}

const HOSTILE = [
  'Fix the guide\n```\n</details><img src=x onerror=alert(1)> @octocat [click](https://evil.example) ![i](https://evil.example/i.png)\n```',
  '````\n# Heading\n\n@org/team please merge',
  '<!-- hide --> <script>alert(1)</script>\r\n~~~\n`` ` ``````````',
];

const files: DiffFile[] = [
  { path: 'docs/intro.md', oldPath: null, status: 'modified', additions: 3, deletions: 1, binary: false },
  { path: 'docs/new `x` @me.md', oldPath: 'docs/old.md', status: 'renamed', additions: 0, deletions: 0, binary: false },
  { path: 'img/logo.png', oldPath: null, status: 'added', additions: 0, deletions: 0, binary: true },
];

describe('pull request body', () => {
  it.each(HOSTILE)('quotes a hostile request as one code block holding exactly its text (%#)', (prompt) => {
    const body = pullRequestBody({ summary: 'Reworded the intro.', firstRequest: null, request: prompt, files, checks: '', template: null, jobId: 'job_1' });
    const tree = parse(body);
    const code = nodes(tree).filter((n) => n.type === 'code');
    expect(code).toHaveLength(1);
    expect((code[0] as { value: string }).value).toBe(prompt.replace(/\r\n?/g, '\n'));
    // Nothing of the prompt is rendered: no HTML, link, image or heading outside the code block.
    const rendered = nodes(tree).filter((n) => ['html', 'link', 'image'].includes(n.type));
    expect(rendered).toEqual([]);
    expect(
      nodes(tree)
        .filter((n) => n.type === 'heading')
        .map((h) => (h as { children: { value?: string }[] }).children[0]?.value),
    ).toEqual(['Request', 'Files changed (3)']);
    const followUp = followUpComment({ summary: 'Done.', request: prompt, commitSha: 'a'.repeat(40), jobId: 'job_1', turn: 2 });
    expect(followUp.marker).toBe('<!-- inkwell:turn:job_1:2 -->');
    const comment = parse(followUp.body);
    expect(nodes(comment).filter((n) => n.type === 'code')).toHaveLength(1);
    // Only the marker, an HTML comment (rendered as nothing), is HTML.
    expect(
      nodes(comment)
        .filter((n) => ['html', 'link', 'image'].includes(n.type))
        .map((n) => (n as { value?: string }).value),
    ).toEqual([followUp.marker]);
  });

  it('clips a long request and lists the files with their counts, inert', () => {
    const quoted = quoteAsData('x'.repeat(5000));
    expect(quoted.length).toBeLessThan(2100);
    const body = pullRequestBody({
      summary: 'S',
      firstRequest: 'first ask',
      request: 'second ask',
      files,
      checks: '### Docs checks\n\nPassed',
      template: null,
      jobId: 'j',
    });
    expect(body).toContain('- `docs/intro.md` (modified, +3 −1)');
    expect(body).toContain("- `docs/old.md` → `docs/new 'x' @\u200bme.md` (renamed, +0 −0)");
    expect(body).toContain('- `img/logo.png` (added, binary)');
    expect(body).toContain('### Latest follow-up');
    expect(body.indexOf('first ask')).toBeLessThan(body.indexOf('second ask'));
    expect(body).toContain('### Docs checks');
  });

  it('renders nothing active from a hostile summary, keeps its lists and code, and leaves the later sections visible', () => {
    const summary = [
      'Updated the guide <!-- everything after this would be hidden',
      '',
      '- see [the docs](https://evil.example) and ![x](https://evil.example/t.png)',
      '- <img src=x onerror=alert(1)> &amp; @octocat https://evil.example www.evil.example',
      '/merge',
      '```sh',
      'npm run build <script>',
    ].join('\n');
    const body = pullRequestBody({ summary, firstRequest: null, request: 'Fix it', files, checks: '', template: null, jobId: 'job_1' });
    const tree = parse(body);
    expect(nodes(tree).filter((n) => ['html', 'link', 'image'].includes(n.type))).toEqual([]);
    // The list and the (closed) code block survive; the sections after the summary are still headings.
    expect(nodes(tree).filter((n) => n.type === 'list')).not.toHaveLength(0);
    expect(
      nodes(tree)
        .filter((n) => n.type === 'code')
        .map((n) => (n as { value: string }).value),
    ).toContain('npm run build <script>');
    expect(
      nodes(tree)
        .filter((n) => n.type === 'heading')
        .map((h) => (h as { children: { value?: string }[] }).children[0]?.value),
    ).toEqual(['Request', 'Files changed (3)']);
    expect(body).toContain('\\/merge');
    expect(body).not.toMatch(/@octocat/);
    const comment = followUpComment({ summary, request: 'Again', commitSha: null, jobId: 'job_1', turn: 2 });
    const commentTree = parse(comment.body);
    // The marker is the comment's only HTML; it stays last, outside any code block.
    expect(
      nodes(commentTree)
        .filter((n) => ['html', 'link', 'image'].includes(n.type))
        .map((n) => (n as { value?: string }).value),
    ).toEqual([comment.marker]);
  });

  it("fits the sections into the repository's template and escapes GitLab quick actions in the summary", () => {
    const template = '## What\n\n<!-- what -->\n\n## Checklist\n- [x] I ran `npm test`\n* [ ] Pinged @docs-team\n';
    const body = pullRequestBody({
      summary: 'Reworded.\n/merge\n```\n/usr/bin\n```',
      firstRequest: null,
      request: 'r',
      files,
      checks: '',
      template,
      jobId: 'j',
    });
    expect(body).toContain(
      '## What\n\nReworded.\n\\/merge\n```\n/usr/bin\n```\n\n## Checklist\n\n- [ ] I ran `npm test`\n* [ ] Pinged @\u200bdocs-team\n\n### Request',
    );
    expect(followUpComment({ summary: '/approve', request: 'r', commitSha: null, jobId: 'j', turn: 2 }).body).toContain('\\/approve');
  });
});

describe('readPullRequestTemplate', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const tree = (entries: Record<string, string>) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-prt-'));
    dirs.push(dir);
    for (const [p, content] of Object.entries(entries)) {
      fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
      fs.writeFileSync(path.join(dir, p), content);
    }
    return dir;
  };

  it('finds the first template in the known places, skips one too large or linked out of the tree', async () => {
    expect(await readPullRequestTemplate(tree({ 'README.md': '#' }))).toBeNull();
    expect(await readPullRequestTemplate(tree({ 'docs/pull_request_template.md': 'D', '.gitlab/merge_request_templates/Default.md': 'G' }))).toBe('D');
    expect(await readPullRequestTemplate(tree({ '.gitlab/merge_request_templates/Default.md': 'G' }))).toBe('G');
    const big = tree({ '.github/pull_request_template.md': 'x'.repeat(MAX_TEMPLATE_BYTES + 1), 'PULL_REQUEST_TEMPLATE.md': 'small' });
    expect(await readPullRequestTemplate(big)).toBe('small');
    const outside = tree({ 'secret.txt': 'SECRET' });
    const linked = tree({});
    fs.mkdirSync(path.join(linked, '.github'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(linked, '.github/pull_request_template.md'));
    expect(await readPullRequestTemplate(linked)).toBeNull();
  });
});
