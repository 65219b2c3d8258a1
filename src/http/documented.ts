// Schemas documented more precisely than the route validates them. An ingest batch validates each event
// on its own in the handler (one bad event is a `rejected` entry, not a 400 for the batch), so the route's
// body schema accepts any item; the OpenAPI document still shows the item's real schema, the same object
// the handler validates with. The route marks the item with `documentedAs(name)` (a standard `$comment`,
// accepted by every validator); the swagger transform puts the registered schema in its place.
import { type TSchema, Type } from 'typebox';

const documented = new Map<string, TSchema>();
const PREFIX = 'documented-as:';

/** A schema that validates anything, shown in the OpenAPI document as `schema` (registered under `name`). */
export function documentedAs(name: string, schema: TSchema) {
  documented.set(name, schema);
  return Type.Unknown({ $comment: `${PREFIX}${name}` });
}

/** `schema` (a route schema) with every `documentedAs` placeholder replaced by its registered schema. Pure. */
export function withDocumentedSchemas<T>(schema: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (typeof node !== 'object' || node === null) return node;
    const comment = (node as { $comment?: unknown }).$comment;
    if (typeof comment === 'string' && comment.startsWith(PREFIX)) {
      const found = documented.get(comment.slice(PREFIX.length));
      if (found) return structuredClone(found);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, visit(v)]));
  };
  return visit(schema) as T;
}
