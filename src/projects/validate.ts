// Pure checks for project input (CLI and any future API share them). No I/O.

export class ProjectInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProjectInputError';
  }
}

export interface ProjectInput {
  name: string;
  repository: string;
  ref?: string | undefined;
  model?: string | null | undefined;
}

const MODEL_RE = /^[a-z][a-z0-9-]*\/\S+$/;
// git check-ref-format, the parts that matter for a branch name typed by a person.
const BAD_REF_RE = /(^[-/.])|([/.]$)|(\.\.)|(\/\/)|(@\{)|([\s~^:?*[\\])|(\.lock$)|(\/\.)/;
const hasControlChar = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/** Returns the input trimmed, or throws ProjectInputError naming the field and the rule. */
export function validateProjectInput(input: ProjectInput): { name: string; repository: string; ref: string; model: string | null } {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 200) throw new ProjectInputError('name', 'name must be 1–200 characters');
  const repository = validateRepositoryInput(input.repository);
  const ref = (input.ref ?? 'main').trim();
  if (ref.length < 1 || ref.length > 255 || BAD_REF_RE.test(ref) || hasControlChar(ref))
    throw new ProjectInputError('ref', `ref ${JSON.stringify(ref)} is not a valid branch name`);
  const model = input.model === undefined || input.model === null ? null : input.model.trim();
  if (model !== null && !MODEL_RE.test(model))
    throw new ProjectInputError('model', 'model must look like <provider>/<model>, e.g. anthropic/claude-sonnet-4-5');
  return { name, repository, ref, model };
}

/** A repository URL or path as a project takes it, trimmed; throws ProjectInputError naming `field`. */
export function validateRepositoryInput(input: string, field = 'repository'): string {
  const repository = input.trim();
  if (repository.length < 1 || repository.length > 2048) throw new ProjectInputError(field, 'repository must be 1–2048 characters');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repository)) {
    let url: URL;
    try {
      url = new URL(repository);
    } catch {
      throw new ProjectInputError(field, `repository is not a valid URL: ${JSON.stringify(repository)}`);
    }
    if (!['https:', 'http:', 'file:', 'ssh:', 'git:'].includes(url.protocol)) {
      throw new ProjectInputError(field, 'repository must be an https://, http://, ssh://, git:// or file:// URL, or a local path');
    }
    if (url.password) throw new ProjectInputError(field, 'repository must not contain a password; give tokens through GITHUB_TOKEN / GITLAB_TOKEN');
  }
  return repository;
}
