// How a host token reaches git: a credential helper supplied through GIT_CONFIG_* that reads the
// token from an environment variable of the git child process. The token never appears in a URL,
// argv, the mirror's config, a log line or an event. Pure: computes settings, runs nothing.
import type { Config } from '../config.ts';
import { parseRepository } from '../hosts/detect.ts';

export const TOKEN_ENV = 'INKWELL_GIT_PASSWORD';
export const USERNAME_ENV = 'INKWELL_GIT_USERNAME';

/** The helper is a tiny shell function: it answers `get` with the username and the token from the environment. */
export const CREDENTIAL_HELPER = `!f() { test "$1" = get || exit 0; echo "username=$${USERNAME_ENV}"; echo "password=$${TOKEN_ENV}"; }; f`;

export interface GitCredentials {
  /** Settings appended to GIT_CONFIG_* (scoped to the host's origin, so the token goes nowhere else). */
  config: Array<[string, string]>;
  /** Environment entries for the git child process only. */
  env: Record<string, string>;
}

export function credentialsFor(repository: string, config: Pick<Config, 'hosts'>): GitCredentials {
  const loc = parseRepository(repository, config);
  if (loc.kind === 'github' && config.hosts.githubToken) {
    return {
      config: [[`credential.${loc.origin}.helper`, CREDENTIAL_HELPER]],
      env: { [USERNAME_ENV]: 'x-access-token', [TOKEN_ENV]: config.hosts.githubToken },
    };
  }
  if (loc.kind === 'gitlab' && config.hosts.gitlabToken) {
    return {
      config: [[`credential.${loc.origin}.helper`, CREDENTIAL_HELPER]],
      env: { [USERNAME_ENV]: 'oauth2', [TOKEN_ENV]: config.hosts.gitlabToken },
    };
  }
  return { config: [], env: {} };
}
