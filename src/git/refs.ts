// Branch-name rules (a pure subset of `git check-ref-format --branch`), usable for request validation.

/** Null when `name` is a usable branch name, else the rule it breaks. */
export function branchNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > 200) return 'branch must be 1–200 characters';
  if (name.startsWith('-')) return 'branch must not start with "-"';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'branch must not start or end with "/" or contain "//"';
  if (name.endsWith('.') || name.endsWith('.lock')) return 'branch must not end with "." or ".lock"';
  if (name.includes('..') || name.includes('@{') || name === '@') return 'branch must not contain "..", "@{" or be "@"';
  if ([...name].some((ch) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f) || /[~^:?*[\\]/.test(name))
    return 'branch must not contain spaces, control characters or any of ~ ^ : ? * [ \\';
  if (name.split('/').some((c) => c.startsWith('.'))) return 'no branch path component may start with "."';
  if (name === 'HEAD') return 'branch must not be HEAD';
  return null;
}
