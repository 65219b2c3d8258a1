// Text that may be stored: well-formed Unicode (no lone UTF-16 surrogate) without NUL. Pure.
//
// A lone surrogate ("\ud800" in JSON) has no UTF-8 encoding: drivers write U+FFFD instead, so the value
// read back differs from the value written (a dictionary lookup by it then fails), and hashes see a
// different string than the database. PostgreSQL text cannot hold U+0000 at all. Both are refused at the
// edge, with an error naming the field, on every database alike.

type WellFormedString = string & { isWellFormed(): boolean };

/** Why `value` cannot be stored as text, as a phrase after the field name; null when it can. */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL (\\u0000) characters';
  if (!(value as WellFormedString).isWellFormed()) return 'must be well-formed Unicode (it contains a lone UTF-16 surrogate)';
  return null;
}
