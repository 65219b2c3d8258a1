// The job branch's diff against its base: totals, a table of the changed files with their stats (each a link
// to its part of the diff), the unified diff with syntax highlighting, and a download of the patch.
import { useMemo } from 'preact/hooks';
import { type DiffLine, parseDiff } from '../diff.ts';
import { highlightLine, languageOf } from '../highlight.ts';
import type { Loaded } from '../hooks.ts';
import type { JobDiff } from '../jobs.ts';
import { Empty, Pending } from './states.tsx';

/** Longest file part highlighted; a longer one is shown as plain text (the page stays responsive). */
const MAX_HIGHLIGHTED_LINES = 2000;
const SIGN: Record<DiffLine['kind'], string> = { add: '+', del: '-', ctx: ' ', hunk: '', meta: '' };

function Line({ line, language }: { line: DiffLine; language: string | undefined }) {
  const code = line.kind === 'add' || line.kind === 'del' || line.kind === 'ctx';
  return (
    <span class={`line ${line.kind}`} data-kind={line.kind}>
      {SIGN[line.kind]}
      {code && language ? <span dangerouslySetInnerHTML={{ __html: highlightLine(line.text, language) }} /> : line.text}
    </span>
  );
}

function FileTable({ diff }: { diff: JobDiff }) {
  return (
    <div class="table-wrap">
      <table id="diff-files">
        <caption class="visually-hidden">Changed files</caption>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Change</th>
            <th scope="col" class="num">
              Lines
            </th>
          </tr>
        </thead>
        <tbody>
          {diff.files.map((f, i) => (
            <tr key={f.path} data-path={f.path}>
              <td>
                <a href={`#diff-file-${i}`}>
                  <code>{f.path}</code>
                </a>
                {f.oldPath ? <span class="muted"> from {f.oldPath}</span> : null}
              </td>
              <td>{f.binary ? `${f.status}, binary` : f.status}</td>
              <td class="num">
                <span class="added">+{f.additions}</span> <span class="removed">−{f.deletions}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function DiffView({ diff: loaded, patchUrl, jobId }: { diff: Loaded<JobDiff>; patchUrl: string; jobId: string }) {
  const diff = loaded.data;
  const parts = useMemo(() => (diff ? parseDiff(diff.diff) : []), [diff]);
  const pending = <Pending error={loaded.error} loading={loaded.loading} hasData={diff !== undefined} what="the diff" retry={loaded.reload} />;
  if (!diff) return pending;
  if (diff.files.length === 0)
    return (
      <>
        {pending}
        <Empty>
          <p>No changes pushed yet. The diff appears here when a turn ends with a commit on the job's branch.</p>
        </Empty>
      </>
    );
  const index = new Map(diff.files.map((f, i) => [f.path, i]));
  const { totals } = diff;
  return (
    <>
      {pending}
      <p class="diff-summary" data-testid="diff-totals">
        {totals.files} {totals.files === 1 ? 'file' : 'files'} changed, <span class="added">+{totals.additions}</span>{' '}
        <span class="removed">−{totals.deletions}</span> against <code>{diff.base?.slice(0, 10)}</code>{' '}
        <a href={patchUrl} download={`${jobId}.patch`}>
          Download the patch
        </a>
      </p>
      {diff.truncated ? <p class="state">The diff is longer than 1 MiB: it stops before the end here and in the patch; the file list is complete.</p> : null}
      <FileTable diff={diff} />
      {parts.map((part, i) => {
        const language = part.lines.length <= MAX_HIGHLIGHTED_LINES ? languageOf(part.path) : undefined;
        const n = index.get(part.path) ?? i;
        return (
          <section key={part.path} class="diff-file" id={`diff-file-${n}`} aria-label={part.path}>
            <h3>
              <code>{part.path}</code>
            </h3>
            <pre class="diff">
              <code>
                {part.lines.map((line, j) => (
                  <Line key={j} line={line} language={language} />
                ))}
              </code>
            </pre>
          </section>
        );
      })}
    </>
  );
}
