// The API contract, checked on every response the tests receive through `httpRequest`: the status is one the
// operation lists in the server's own /openapi.json, the content type is one it documents for that status,
// the headers it marks required are there (and well-formed), and a JSON body matches that response's schema.
// An operation the hosted service also has (same method and path template in the hosted documents, copies
// in test/jobs/fixtures and test/analytics/fixtures) is held to the hosted document as well. A mismatch
// fails the request (and so the test) with the operation, the status and what did not match.
import fs from 'node:fs';
import path from 'node:path';
import AjvModule from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const Ajv = AjvModule.default ?? AjvModule;
const addFormats = (addFormatsModule.default ?? addFormatsModule) as unknown as (a: InstanceType<typeof Ajv> | Ajv2020) => void;

interface Header {
  required?: boolean;
  schema?: { type?: string; enum?: string[] };
}
interface Response {
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, Header>;
}
type Methods = Record<string, { responses?: Record<string, Response> }>;
interface Doc {
  paths: Record<string, Methods>;
}

interface Validator {
  getSchema(ref: string): ((data: unknown) => boolean) & { errors?: unknown };
  errorsText(errors?: any): string;
}

interface Contract {
  ajv: Validator;
  operations: { re: RegExp; template: string; methods: Methods }[];
}

/** The hosted documents (hosted-admin is OpenAPI 3.0: `nullable`, draft-07 validator; hosted-analytics is 3.1). */
const HOSTED = [
  { id: 'hosted-admin', file: path.resolve(import.meta.dirname, '../jobs/fixtures/hosted-admin.openapi.json'), draft2020: false },
  { id: 'hosted-analytics', file: path.resolve(import.meta.dirname, '../analytics/fixtures/hosted-analytics.openapi.json'), draft2020: true },
];

const pointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

function newAjv(draft2020: boolean): Validator {
  const ajv = draft2020 ? new Ajv2020({ strict: false, allErrors: true, validateFormats: true }) : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv as unknown as Validator;
}

function contractOf(doc: Doc, id: string, ajv: Validator & { addSchema(schema: object): unknown }): Contract {
  ajv.addSchema({ ...doc, $id: id });
  const operations = Object.entries(doc.paths ?? {}).map(([template, methods]) => ({
    template,
    methods,
    re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
  }));
  return { ajv, operations };
}

let hosted: { id: string; contract: Contract }[] | null = null;
function hostedContracts(): { id: string; contract: Contract }[] {
  hosted ??= HOSTED.map(({ id, file, draft2020 }) => ({
    id,
    contract: contractOf(JSON.parse(fs.readFileSync(file, 'utf8')) as Doc, id, newAjv(draft2020) as Validator & { addSchema(schema: object): unknown }),
  }));
  return hosted;
}

const contracts = new Map<string, Promise<Contract | null>>();

async function load(baseUrl: string): Promise<Contract | null> {
  let doc: Doc;
  try {
    const res = await fetch(`${baseUrl}/openapi.json`);
    if (!res.ok) return null;
    doc = (await res.json()) as Doc;
  } catch {
    return null;
  }
  return contractOf(doc, 'openapi', newAjv(true) as Validator & { addSchema(schema: object): unknown });
}

export interface ObservedResponse {
  status: number;
  contentType: string | null;
  body: unknown;
  text: string;
  /** When given, the headers the document marks required are checked. */
  headers?: Headers;
}

/** The response object a document gives for `status` (exact, `4XX`, `default`) and the key it is under. */
function responseFor(responses: Record<string, Response>, status: string): { key: string; response: Response } | null {
  for (const key of [status, `${status[0]}XX`, 'default']) {
    const response = responses[key];
    if (response) return { key, response };
  }
  return null;
}

/** Whether a header value is what its schema allows (header values are text: an integer is digits). */
function headerValueOk(value: string, schema: Header['schema']): boolean {
  if (schema?.enum && !schema.enum.includes(value)) return false;
  if (schema?.type === 'integer') return /^\d+$/.test(value);
  return true;
}

/** Why `body` breaks the JSON schema of `key`'s response of operation `m template` in `contract`, or null. */
function bodyViolation(contract: Contract, docId: string, template: string, m: string, key: string, body: unknown): string | null {
  const ref = `${docId}#/paths/${pointer(template)}/${m}/responses/${pointer(key)}/content/${pointer('application/json')}/schema`;
  const validate = contract.ajv.getSchema(ref);
  if (!validate) return `no schema at ${ref}`;
  return validate(body) ? null : contract.ajv.errorsText(validate.errors);
}

/**
 * Why the response breaks the hosted document's operation of the same method and path, or null. The hosted
 * documents list only some of their errors: an error status they do not list is held to the error schema
 * the operation uses for the ones they do (what a client generated from them parses any error with). A
 * success must be the status the hosted document gives.
 */
export function hostedViolation(method: string, template: string, res: ObservedResponse): string | null {
  const m = method.toLowerCase();
  for (const { id, contract } of hostedContracts()) {
    const op = contract.operations.find((o) => o.template === template)?.methods[m];
    if (!op) continue;
    const responses = op.responses ?? {};
    const status = String(res.status);
    let found = responseFor(responses, status);
    if (!found && res.status >= 400) {
      const key = Object.keys(responses).find((k) => /^[45]/.test(k) && responses[k]?.content?.['application/json']?.schema);
      found = key ? { key, response: responses[key] as Response } : null;
      if (!found) continue; // the hosted document says nothing about this operation's errors
    }
    if (!found)
      return `${method} ${template} answered ${status}, which the hosted document (${id}) does not list (it lists ${Object.keys(responses).join(', ')})`;
    if (!res.contentType?.includes('json') || !found.response.content?.['application/json']?.schema) continue;
    const why = bodyViolation(contract, id, template, m, found.key, res.body);
    if (why)
      return `${method} ${template} ${status}: the body does not match the hosted document (${id}, response ${found.key}): ${why}; body ${res.text.slice(0, 300)}`;
  }
  return null;
}

/** Why a response breaks the contract, or null when it keeps it (or is outside any documented operation). */
export async function contractViolation(baseUrl: string, method: string, url: string, res: ObservedResponse): Promise<string | null> {
  if (method === 'HEAD' || method === 'OPTIONS') return null;
  let c = contracts.get(baseUrl);
  if (!c) {
    c = load(baseUrl);
    contracts.set(baseUrl, c);
  }
  const contract = await c;
  if (!contract) return null;
  const pathname = url.split('?')[0] ?? '';
  const op = contract.operations.find((o) => o.re.test(pathname));
  const m = method.toLowerCase();
  // Unknown paths (404) and methods a path does not have (405) are outside every operation.
  const operation = op?.methods[m];
  if (!op || !operation) return null;
  const responses = operation.responses ?? {};
  const status = String(res.status);
  const found = responseFor(responses, status);
  if (!found)
    return `${method} ${op.template} answered ${status}, which the document does not list (it lists ${Object.keys(responses).join(', ')}): ${res.text.slice(0, 300)}`;
  const { key, response } = found;
  if (res.headers) {
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) return `${method} ${op.template} ${status}: the required header ${name} is missing`;
      } else if (!headerValueOk(value, header.schema)) {
        return `${method} ${op.template} ${status}: header ${name}: ${JSON.stringify(value)} is not what the document allows (${JSON.stringify(header.schema)})`;
      }
    }
  }
  const media = res.contentType?.split(';')[0]?.trim().toLowerCase();
  if (media && res.text !== '' && response.content && !(media in response.content))
    return `${method} ${op.template} ${status}: content type ${media}, which the document does not give (it gives ${Object.keys(response.content).join(', ')})`;
  if (media?.includes('json') && response.content?.['application/json']?.schema) {
    const why = bodyViolation(contract, 'openapi', op.template, m, key, res.body);
    if (why) return `${method} ${op.template} ${status}: the body does not match the document: ${why}; body ${res.text.slice(0, 300)}`;
  }
  return hostedViolation(method, op.template, res);
}
