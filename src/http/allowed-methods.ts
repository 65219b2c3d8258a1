// What a route takes besides its schema's body: which methods a path has routes for (a known path asked with
// another method is 405 with `Allow`, not 404), and which query parameters (any other is 400 `unknown_field`,
// one rule for every API endpoint). Built from Fastify's onRoute hook. Pure.
import { AppError, type ErrorDetail } from '../errors.ts';

interface Pattern {
  re: RegExp;
  methods: Set<string>;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `/v2/agent/:projectId/job/:id` → a regular expression for concrete paths (a trailing slash allowed). */
export function patternOf(url: string): RegExp {
  const body = url
    .replace(/\/+$/, '')
    .split('/')
    .map((seg) => (seg === '*' ? '.*' : seg.startsWith(':') ? '[^/]+' : escapeRe(seg)))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

export class RouteMethods {
  private readonly patterns = new Map<string, Pattern>();

  add(method: string | string[], url: string): void {
    let p = this.patterns.get(url);
    if (!p) {
      p = { re: patternOf(url), methods: new Set() };
      this.patterns.set(url, p);
    }
    for (const m of Array.isArray(method) ? method : [method]) p.methods.add(m.toUpperCase());
  }

  /** Methods with a route for `path` (without its query), sorted; empty for an unknown path. */
  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const p of this.patterns.values()) if (p.re.test(path)) for (const m of p.methods) out.add(m);
    if (out.has('GET')) out.add('HEAD');
    return [...out].sort();
  }
}

/** 400 `unknown_field` naming every query parameter not in `allowed`, or null. */
export function unknownQueryParams(query: unknown, allowed: readonly string[]): AppError | null {
  if (typeof query !== 'object' || query === null) return null;
  const details: ErrorDetail[] = [];
  const takes = allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'this endpoint takes none';
  for (const name of Object.keys(query)) {
    if (!allowed.includes(name)) details.push({ path: name.slice(0, 100), message: `Unknown query parameter "${name.slice(0, 100)}" (${takes})` });
  }
  return details.length > 0 ? new AppError('unknown_field', details[0]!.message, details.slice(0, 20)) : null;
}
