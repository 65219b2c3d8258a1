// Docs sites written to temp directories for the checks: real files (and symlinks) on disk.
import fs from 'node:fs';
import path from 'node:path';
import { runDocsChecks } from '../../src/docs-checks/run.ts';
import type { ChangedFile, CheckLimits, CheckReport } from '../../src/docs-checks/types.ts';
import { tempDir } from '../helpers/git.ts';

const made: string[] = [];

export function writeSite(files: Record<string, string>, symlinks: Record<string, string> = {}): string {
  const root = tempDir('inkwell-docs-');
  made.push(root);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
  for (const [rel, target] of Object.entries(symlinks)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.symlinkSync(target, path.join(root, rel));
  }
  return root;
}

export function cleanupSites(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export const added = (...paths: string[]): ChangedFile[] => paths.map((p) => ({ path: p, status: 'added', oldPath: null }));
export const modified = (...paths: string[]): ChangedFile[] => paths.map((p) => ({ path: p, status: 'modified', oldPath: null }));
export const deleted = (...paths: string[]): ChangedFile[] => paths.map((p) => ({ path: p, status: 'deleted', oldPath: null }));
export const renamed = (from: string, to: string): ChangedFile[] => [{ path: to, status: 'renamed', oldPath: from }];

export function check(root: string, changes: ChangedFile[], opts: { signal?: AbortSignal; limits?: Partial<CheckLimits> } = {}): Promise<CheckReport> {
  return runDocsChecks({ root, changes, ...opts });
}

/** Findings as `file:line rule` strings (plus the message when asked), for compact assertions. */
export function brief(report: CheckReport): string[] {
  return report.findings.map((f) => `${f.file}:${f.line} ${f.rule}`);
}
