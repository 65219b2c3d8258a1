// Which code host a repository URL belongs to, and where it lives. Pure: no I/O.
import path from 'node:path';
import type { Config } from '../config.ts';

type RepositoryLocation =
  | { kind: 'local'; path: string }
  | { kind: 'github'; origin: string; host: string; owner: string; repo: string }
  | { kind: 'gitlab'; origin: string; host: string; projectPath: string }
  | { kind: 'unknown'; origin: string | null; host: string | null };

function hostOf(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
}

/** GitHub hosts: github.com plus the host of GITHUB_API_URL (GitHub Enterprise Server). */
function githubHosts(config: Pick<Config, 'hosts'>): string[] {
  const hosts = new Set(['github.com']);
  const api = hostOf(config.hosts.githubApiUrl);
  if (api && api !== 'api.github.com') hosts.add(api);
  return [...hosts];
}

/** GitLab hosts: gitlab.com plus the host of GITLAB_URL (self-managed). */
function gitlabHosts(config: Pick<Config, 'hosts'>): string[] {
  const hosts = new Set(['gitlab.com']);
  const h = hostOf(config.hosts.gitlabUrl);
  if (h) hosts.add(h);
  return [...hosts];
}

export function isLocalRepository(repository: string): boolean {
  return repository.startsWith('file://') || repository.startsWith('/') || repository.startsWith('./') || repository.startsWith('../');
}

/** Splits `https://host/a/b(.git)`, `ssh://git@host/a/b.git` or `git@host:a/b.git` into origin, host and path. */
export function splitRemote(repository: string): { origin: string; host: string; path: string } | null {
  const scp = /^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):(?!\/)(.+)$/.exec(repository);
  if (scp) return { origin: `https://${scp[1]!.toLowerCase()}`, host: scp[1]!.toLowerCase(), path: scp[2]! };
  let u: URL;
  try {
    u = new URL(repository);
  } catch {
    return null;
  }
  if (!['http:', 'https:', 'ssh:', 'git:'].includes(u.protocol) || !u.host) return null;
  const protocol = u.protocol === 'http:' ? 'http:' : 'https:';
  return { origin: `${protocol}//${u.host.toLowerCase()}`, host: u.host.toLowerCase(), path: decodeURIComponent(u.pathname).replace(/^\/+/, '') };
}

export function parseRepository(repository: string, config: Pick<Config, 'hosts'>): RepositoryLocation {
  if (isLocalRepository(repository)) {
    const p = repository.startsWith('file://') ? decodeURIComponent(new URL(repository).pathname) : path.resolve(repository);
    return { kind: 'local', path: p };
  }
  const remote = splitRemote(repository);
  if (!remote) return { kind: 'unknown', origin: null, host: null };
  const cleanPath = remote.path.replace(/\/+$/, '').replace(/\.git$/, '');
  const parts = cleanPath.split('/').filter(Boolean);
  if (githubHosts(config).includes(remote.host) && parts.length === 2) {
    return { kind: 'github', origin: remote.origin, host: remote.host, owner: parts[0]!, repo: parts[1]! };
  }
  if (gitlabHosts(config).includes(remote.host) && parts.length >= 2) {
    // A GitLab instance under a path prefix (https://host/gitlab) keeps that prefix out of the project path.
    const prefix = new URL(config.hosts.gitlabUrl).pathname.replace(/^\/+|\/+$/g, '');
    const rest = prefix && cleanPath.startsWith(`${prefix}/`) ? cleanPath.slice(prefix.length + 1) : cleanPath;
    return { kind: 'gitlab', origin: remote.origin, host: remote.host, projectPath: rest };
  }
  return { kind: 'unknown', origin: remote.origin, host: remote.host };
}

/**
 * Why git must not be given this repository string, or null when it is acceptable: no credentials in
 * the URL, no option-looking values, no transport helpers (`ext::`), only known schemes.
 */
export function repositoryProblem(repository: string): string | null {
  if (repository.trim() !== repository || repository === '') return 'repository must be a non-empty URL or path without surrounding spaces';
  if (repository.startsWith('-')) return 'repository must not start with "-"';
  if (/[\0\n\r]/.test(repository)) return 'repository must not contain control characters';
  if (repository.includes('::')) return 'repository must not use a git transport helper (“::”)';
  if (isLocalRepository(repository)) return null;
  if (/^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/)/.test(repository)) return null;
  let u: URL;
  try {
    u = new URL(repository);
  } catch {
    return 'repository must be an https:// URL, an ssh remote, a file:// URL or an absolute path';
  }
  if (!['http:', 'https:', 'ssh:', 'git:'].includes(u.protocol)) return `repository scheme ${u.protocol} is not supported`;
  if (u.password) return 'repository URL must not contain credentials; use GITHUB_TOKEN / GITLAB_TOKEN or a git credential helper';
  if ((u.protocol === 'http:' || u.protocol === 'https:') && u.username)
    return 'repository URL must not contain credentials; use GITHUB_TOKEN / GITLAB_TOKEN or a git credential helper';
  return null;
}
