// Path globs for --task and the allowed-changes lists: `*` within a path segment, `**` across segments, `?` one
// character, `{a,b}` alternatives. Pure.

function escapeChar(c: string): string {
  return /[.+^$()|[\]\\]/.test(c) ? `\\${c}` : c;
}

export function globToRegExp(glob: string): RegExp {
  let out = '';
  let inBraces = false;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        // `**/` matches zero or more whole segments.
        if (glob[i + 1] === '/') {
          i++;
          out += '(?:.*/)?';
        } else out += '.*';
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '{') {
      inBraces = true;
      out += '(?:';
    } else if (c === '}' && inBraces) {
      inBraces = false;
      out += ')';
    } else if (c === ',' && inBraces) out += '|';
    else out += escapeChar(c);
  }
  return new RegExp(`^${out}$`);
}

export function matchesGlob(value: string, glob: string): boolean {
  return globToRegExp(glob).test(value);
}

export function matchesAny(value: string, globs: readonly string[]): boolean {
  return globs.some((g) => matchesGlob(value, g));
}
