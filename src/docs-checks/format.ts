// Findings as text: for the model (a tool result or a repair message) and for a pull-request body. Pure.
import type { CheckReport, Finding } from './types.ts';

const FRAMEWORK_NAMES = { mintlify: 'Mintlify', mkdocs: 'MkDocs', docusaurus: 'Docusaurus', markdown: 'plain Markdown' } as const;

export function findingLine(f: Finding): string {
  const where = f.file === '' ? '(checks)' : f.line > 0 ? `${f.file}:${f.line}:${f.column}` : f.file;
  return `${where} ${f.rule}: ${f.message}`;
}

/** The report as the model reads it: a verdict line, one line per finding, then the notes. */
export function formatReport(report: CheckReport, maxFindings = 100): string {
  const name = FRAMEWORK_NAMES[report.framework];
  const files = report.checkedFiles.length;
  const head =
    report.findings.length === 0
      ? `Docs checks passed (${name}; ${files} page${files === 1 ? '' : 's'} checked: ${report.checks.join(', ')}).`
      : `Docs checks found ${report.findings.length} problem${report.findings.length === 1 ? '' : 's'} (${name}; ${files} page${files === 1 ? '' : 's'} checked):`;
  const lines = report.findings.slice(0, maxFindings).map(findingLine);
  if (report.findings.length > maxFindings) lines.push(`… ${report.findings.length - maxFindings} more`);
  const notes = report.notes.length > 0 ? `\nNot checked:\n${report.notes.map((n) => `- ${n}`).join('\n')}` : '';
  return [head, ...lines].join('\n') + notes;
}
