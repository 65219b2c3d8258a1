// The oldest Node.js Inkwell runs on (package.json `engines`): 22.15 is the first 22.x with zstd in node:zlib,
// which the analytics segments are compressed with. Plain JavaScript (no imports) so that it runs before anything
// that would fail on an older Node.js with a less clear error.

export const MIN_NODE = [22, 15];

/** Why Node.js `version` ("20.20.2" or "v20.20.2") cannot run Inkwell, or null when it can. */
export function nodeVersionProblem(version) {
  const [major = 0, minor = 0] = String(version).replace(/^v/, '').split('.').map(Number);
  if (major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1])) return null;
  return `inkwell needs Node.js ${MIN_NODE.join('.')} or later (this is ${version}); install Node.js 24 LTS`;
}
