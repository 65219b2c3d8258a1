// Text written by the model or taken from a repository, made inert for a code host's Markdown (a comment, a pull
// request body): its first line only, clipped, no @mention (nobody is pinged by it) and no backticks (it is put
// inside a code span, so links, images and HTML in it are shown, never rendered or fetched). Pure.
export function inert(text: string, max = 200): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  const clipped = line.length > max ? `${line.slice(0, max)}…` : line;
  return clipped.replace(/@/g, '@\u200b').replace(/`/g, "'").trim();
}
