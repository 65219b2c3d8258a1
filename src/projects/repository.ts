// Which repositories a project's jobs may use: the project's own `repository` plus its allow-list
// (settings.allowedRepositories, stored canonical). Pure: no I/O (relative paths resolve against `cwd`).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isLocalRepository, repositoryProblem } from '../hosts/detect.ts';
import { ProjectInputError, validateRepositoryInput } from './validate.ts';

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443', 'ssh:': '22', 'git:': '9418' };
const UNRESERVED = /[A-Za-z0-9._~-]/;
/** `user@host:path`, git's scp-like ssh syntax (the same shape as splitRemote in hosts/detect.ts). */
const SCP_RE = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+):(?!\/)(.+)$/;

/**
 * The canonical form of a repository URL or path, for comparing two spellings of one repository; null
 * when it is neither a URL git would be given (http, https, ssh, git, file), an scp-like ssh remote, nor
 * an absolute or ./-relative path. Never handed to git: jobs keep the string they were given.
 *
 * - Remote URLs: scheme and host lower-case, default ports (80, 443, 22, 9418) dropped, percent-escapes of
 *   unreserved characters decoded (others upper-cased), trailing slashes and then one trailing `.git`
 *   removed. The user part stays as it is (`ssh://git@h/x` and `ssh://other@h/x` differ) and a URL parser,
 *   not string matching, finds the host, so `https://github.com@evil.example/a/b` is a repository on
 *   evil.example. Query and fragment are kept (so they can only make two spellings differ).
 * - The path is compared case-sensitively except on github.com: GitHub treats owner and repository names
 *   case-insensitively (`Acme/Docs` is `acme/docs`), while GitLab and other hosts may not (GitLab project
 *   paths are case-sensitive in places, a plain git server's file system usually is). GitHub Enterprise
 *   hosts are not known to this pure function and so are compared case-sensitively: stricter, never looser.
 * - scp-like `user@host:path` is `ssh://user@host/~/path`: git resolves it against the login's home
 *   directory, so it equals neither `ssh://user@host/path` nor an https URL of the same host (allow each
 *   spelling you use).
 * - Local paths and file:// URLs: the absolute, normalized path (`.`/`..` and trailing slashes resolved) as
 *   a file:// URL. A `.git` suffix is kept there: `/srv/docs` and `/srv/docs.git` are different directories.
 */
export function canonicalRepository(repository: string, cwd: string = process.cwd()): string | null {
  const r = repository.trim();
  if (r === '' || /[\0\n\r]/.test(r)) return null;
  if (isLocalRepository(r)) {
    let abs: string;
    try {
      // fileURLToPath refuses a remote host (file://host/…) and an encoded "/" in the path.
      abs = r.startsWith('file://') ? fileURLToPath(r) : path.resolve(cwd, r);
    } catch {
      return null;
    }
    return pathToFileURL(path.resolve(abs)).href;
  }
  const scp = SCP_RE.exec(r);
  if (scp) {
    const p = scp[3]!;
    return remote('ssh:', `${scp[1]}@`, scp[2]!.toLowerCase(), '', p.startsWith('~') ? `/${p}` : `/~/${p}`, '', '');
  }
  let u: URL;
  try {
    u = new URL(r);
  } catch {
    return null;
  }
  if (!(u.protocol in DEFAULT_PORTS) || !u.hostname) return null;
  const userinfo = u.username || u.password ? `${u.username}${u.password ? `:${u.password}` : ''}@` : '';
  // WHATWG URL lower-cases the host and drops the default port only for http(s); do both for ssh/git too.
  const port = u.port && u.port !== DEFAULT_PORTS[u.protocol] ? `:${u.port}` : '';
  return remote(u.protocol, userinfo, u.hostname.toLowerCase(), port, u.pathname, u.search, u.hash);
}

function remote(scheme: string, userinfo: string, host: string, port: string, pathname: string, search: string, hash: string): string {
  let p = pathname.replace(/%[0-9a-fA-F]{2}/g, (esc) => {
    const c = String.fromCharCode(Number.parseInt(esc.slice(1), 16));
    return UNRESERVED.test(c) ? c : esc.toUpperCase();
  });
  if (host === 'github.com') p = p.toLowerCase();
  p = p.replace(/\/+$/, '').replace(/\.git$/, '');
  return `${scheme}//${userinfo}${host}${port}${p}${search}${hash}`;
}

/** What decides a job's repository: the project's own repository and its allow-list. */
export interface RepositoryScope {
  repository: string;
  settings?: { allowedRepositories?: string[] | undefined } | undefined;
}

/** True when `a` and `b` name the same repository (identical strings, or the same canonical form). */
export function sameRepository(a: string, b: string, cwd?: string): boolean {
  if (a === b) return true;
  const ca = canonicalRepository(a, cwd);
  return ca !== null && ca === canonicalRepository(b, cwd);
}

/** May a job of this project use `repository`: the project's own, or one on its allow-list? */
export function repositoryAllowed(scope: RepositoryScope, repository: string, cwd?: string): boolean {
  if (sameRepository(repository, scope.repository, cwd)) return true;
  const c = canonicalRepository(repository, cwd);
  if (c === null) return false;
  // Entries are stored canonical; canonicalising again also covers lists written by hand.
  return (scope.settings?.allowedRepositories ?? []).some((entry) => entry === c || canonicalRepository(entry, cwd) === c);
}

/**
 * The canonical form of a repository for the allow-list, after the checks a project repository gets
 * (validateRepositoryInput) and the ones git is given a repository under (repositoryProblem). Throws
 * ProjectInputError naming `field`.
 */
export function allowListEntry(repository: string, field: string, cwd?: string): string {
  const r = validateRepositoryInput(repository, field);
  const problem = repositoryProblem(r);
  if (problem) throw new ProjectInputError(field, problem);
  const c = canonicalRepository(r, cwd);
  if (c === null) throw new ProjectInputError(field, `${JSON.stringify(r)} is not a repository URL or an absolute or ./-relative path`);
  return c;
}

/**
 * The allow-list after adding `allow` and removing `disallow` (URLs as given; validated and canonicalised
 * here). Throws ProjectInputError for an invalid URL, one named in both, a `disallow` that is not on the
 * list, or the project's own repository given to `disallow` (it is always allowed). Adding the project's
 * own repository or an entry already listed changes nothing.
 */
export function changeAllowList(scope: RepositoryScope, allow: string[], disallow: string[], cwd?: string): string[] {
  const add = allow.map((r) => allowListEntry(r, 'allow-repository', cwd));
  const remove = disallow.map((r) => allowListEntry(r, 'disallow-repository', cwd));
  const own = canonicalRepository(scope.repository, cwd);
  const list = (scope.settings?.allowedRepositories ?? []).map((e) => canonicalRepository(e, cwd) ?? e);
  for (const [i, c] of remove.entries()) {
    if (add.includes(c))
      throw new ProjectInputError('disallow-repository', `${JSON.stringify(disallow[i])} is given to both --allow-repository and --disallow-repository`);
    if (c === own)
      throw new ProjectInputError('disallow-repository', `${JSON.stringify(disallow[i])} is the project's own repository; its jobs may always use it`);
    if (!list.includes(c)) throw new ProjectInputError('disallow-repository', `${JSON.stringify(disallow[i])} is not on the project's allow-list`);
  }
  const next: string[] = [];
  for (const c of [...list, ...add]) if (c !== own && !remove.includes(c) && !next.includes(c)) next.push(c);
  return next;
}
