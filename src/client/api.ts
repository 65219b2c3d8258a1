// The request and response types of the API, taken from the types generated from its OpenAPI document
// (openapi.ts, `npm run gen:client`): the client, and the CLI through it, type-check against the document.
import type { paths } from './openapi.ts';

/** The JSON body of a response (or request body) object of the generated types. */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

type Operations = { [P in keyof paths]: { [M in keyof paths[P]]: paths[P][M] } };
type Op<P extends keyof paths, M extends keyof Operations[P]> = Operations[P][M];

/** The JSON body of operation `M P`'s `S` response. */
export type ResponseBody<P extends keyof paths, M extends keyof Operations[P], S extends number> =
  Op<P, M> extends { responses: infer R } ? (S extends keyof R ? Json<R[S]> : never) : never;

/** The JSON request body of operation `M P`. */
export type RequestBody<P extends keyof paths, M extends keyof Operations[P]> = Op<P, M> extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;

/** The query parameters of operation `M P` (all optional where the document says so). */
export type QueryParams<P extends keyof paths, M extends keyof Operations[P]> = Op<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
