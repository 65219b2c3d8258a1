// The repository canonicaliser and the allow-list rules: pure, no database.
import { describe, expect, it } from 'vitest';
import { allowListEntry, canonicalRepository, changeAllowList, repositoryAllowed, sameRepository } from '../../src/projects/repository.ts';
import { ProjectInputError } from '../../src/projects/validate.ts';

const CWD = '/srv/work';

describe('canonicalRepository', () => {
  it.each([
    ['https://github.com/acme/docs', 'https://github.com/acme/docs'],
    ['HTTPS://GitHub.COM:443/Acme/Docs.git/', 'https://github.com/acme/docs'],
    ['http://git.example.com:80/a/b/', 'http://git.example.com/a/b'],
    ['https://git.example.com:8443/a/b', 'https://git.example.com:8443/a/b'],
    ['ssh://git@GitLab.com:22/Group/Sub/Docs.git', 'ssh://git@gitlab.com/Group/Sub/Docs'],
    ['git://Host.example:9418/x.git', 'git://host.example/x'],
    ['git@github.com:Acme/Docs.git', 'ssh://git@github.com/~/acme/docs'],
    ['git@host.example:~other/x', 'ssh://git@host.example/~other/x'],
    ['https://github.com/acme/%64ocs', 'https://github.com/acme/docs'],
    ['https://git.example.com/a%2fb', 'https://git.example.com/a%2Fb'],
    ['/srv/git/docs/', 'file:///srv/git/docs'],
    ['/srv/git/./x/../docs.git', 'file:///srv/git/docs.git'],
    ['./docs', 'file:///srv/work/docs'],
    ['../git/docs', 'file:///srv/git/docs'],
    ['file:///srv/git/docs/', 'file:///srv/git/docs'],
    ['file://localhost/srv/git/a%20b', 'file:///srv/git/a%20b'],
  ])('%s → %s', (input, canonical) => {
    expect(canonicalRepository(input, CWD)).toBe(canonical);
    // Idempotent: the canonical form is its own canonical form.
    expect(canonicalRepository(canonical, CWD)).toBe(canonical);
  });

  it.each([[''], ['docs'], ['github.com/acme/docs'], ['ftp://host/x'], ['ext::sh -c x'], ['file://other-host/srv/x'], ['https://']])(
    '%j has no canonical form',
    (input) => {
      expect(canonicalRepository(input, CWD)).toBeNull();
    },
  );

  it.each([
    // Same repository, other spellings.
    ['https://github.com/acme/docs', 'https://GITHUB.com/acme/docs.git', true],
    ['https://github.com/acme/docs', 'https://github.com/acme/docs/', true],
    ['https://github.com/acme/docs', 'https://github.com/ACME/Docs', true], // GitHub names are case-insensitive
    ['https://github.com/acme/docs', 'https://github.com:443/acme/docs', true],
    ['https://gitlab.com/g/docs', 'https://GitLab.com/g/docs.git/', true],
    ['ssh://git@host.example/x', 'ssh://git@HOST.example:22/x.git', true],
    ['/srv/git/docs', 'file:///srv/git/docs/', true],
    ['/srv/git/docs', './../git/docs', true],
    // Different repositories.
    ['https://gitlab.com/g/docs', 'https://gitlab.com/G/Docs', false], // case counts outside github.com
    ['https://git.example.com/a/docs', 'https://git.example.com/a/Docs', false],
    ['https://github.com/acme/docs', 'https://github.com/acme/site', false],
    ['https://github.com/acme/docs', 'https://github.com/acme/docs/wiki', false],
    ['https://github.com/acme/docs', 'http://github.com/acme/docs', false], // scheme counts
    ['https://github.com/acme/docs', 'https://github.com:8443/acme/docs', false],
    ['https://github.com/acme/docs', 'https://github.com@evil.example/acme/docs', false], // user-info is not the host
    ['https://github.com/acme/docs', 'https://evil.example/github.com/acme/docs', false],
    ['https://github.com/acme/docs', 'https://github.com.evil.example/acme/docs', false],
    ['ssh://git@host.example/x', 'ssh://other@host.example/x', false], // user-info never makes two URLs equal
    ['ssh://git@host.example/x', 'ssh://host.example/x', false],
    ['git@host.example:x', 'ssh://git@host.example/x', false], // ~/x and /x on a plain ssh server
    ['https://github.com/acme/docs', 'git@github.com:acme/docs.git', false],
    ['/srv/git/docs', '/srv/git/docs.git', false], // two directories
    ['/srv/git/docs', '/srv/git/Docs', false],
    ['/srv/git/docs', 'file://evil/srv/git/docs', false],
    ['https://github.com/acme/docs', '/srv/git/docs', false],
  ])('%s vs %s → %s', (a, b, equal) => {
    expect(sameRepository(a, b, CWD)).toBe(equal);
    expect(sameRepository(b, a, CWD)).toBe(equal);
  });

  it('strings without a canonical form are the same only when identical', () => {
    expect(sameRepository('docs', 'docs', CWD)).toBe(true);
    expect(sameRepository('docs', 'docs/', CWD)).toBe(false);
  });
});

describe('the allow-list', () => {
  const scope = { repository: 'https://github.com/acme/docs', settings: { allowedRepositories: ['https://github.com/acme/site', 'file:///srv/git/docs'] } };

  it('allows the project repository in any spelling and listed repositories, nothing else', () => {
    expect(repositoryAllowed(scope, 'https://github.com/acme/docs', CWD)).toBe(true);
    expect(repositoryAllowed(scope, 'https://GitHub.com/Acme/docs.git/', CWD)).toBe(true);
    expect(repositoryAllowed(scope, 'https://github.com/acme/site.git', CWD)).toBe(true);
    expect(repositoryAllowed(scope, '/srv/git/docs/', CWD)).toBe(true);
    expect(repositoryAllowed(scope, 'https://github.com/acme/other', CWD)).toBe(false);
    expect(repositoryAllowed(scope, 'https://github.com@evil.example/acme/site', CWD)).toBe(false);
    expect(repositoryAllowed(scope, '/srv/git/other', CWD)).toBe(false);
    expect(repositoryAllowed(scope, 'docs', CWD)).toBe(false);
    expect(repositoryAllowed({ repository: 'https://github.com/acme/docs' }, 'https://github.com/acme/site', CWD)).toBe(false);
  });

  it('validates entries like a project repository, and stores them canonical', () => {
    expect(allowListEntry(' https://GitHub.com/Acme/Site.git ', 'f', CWD)).toBe('https://github.com/acme/site');
    expect(allowListEntry('./mirror', 'f', CWD)).toBe('file:///srv/work/mirror');
    for (const bad of ['', 'https://u:p@github.com/a/b', 'https://u@github.com/a/b', 'javascript://x', 'ftp://h/x', '-oProxyCommand=x', 'docs', 'ext::x']) {
      expect(() => allowListEntry(bad, 'allow-repository', CWD), bad).toThrow(ProjectInputError);
    }
  });

  it('adds, removes and refuses what makes no sense', () => {
    const own = { repository: 'https://github.com/acme/docs' };
    let list = changeAllowList(own, ['https://github.com/acme/site.git', 'https://GitHub.com/acme/site', 'https://github.com/acme/docs/'], [], CWD);
    expect(list).toEqual(['https://github.com/acme/site']); // duplicates and the own repository are not stored
    list = changeAllowList({ ...own, settings: { allowedRepositories: list } }, ['/srv/git/x'], [], CWD);
    expect(list).toEqual(['https://github.com/acme/site', 'file:///srv/git/x']);
    list = changeAllowList({ ...own, settings: { allowedRepositories: list } }, [], ['https://github.com/Acme/Site/'], CWD);
    expect(list).toEqual(['file:///srv/git/x']);
    const withList = { ...own, settings: { allowedRepositories: list } };
    expect(() => changeAllowList(withList, [], ['https://github.com/acme/nope'], CWD)).toThrow(/not on the project's allow-list/);
    expect(() => changeAllowList(withList, [], ['https://github.com/acme/docs'], CWD)).toThrow(/project's own repository/);
    expect(() => changeAllowList(withList, ['/srv/git/y'], ['/srv/git/y/'], CWD)).toThrow(/both/);
    expect(() => changeAllowList(withList, ['https://tok:x@github.com/a/b'], [], CWD)).toThrow(ProjectInputError);
  });
});
