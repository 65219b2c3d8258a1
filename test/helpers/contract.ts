// The API contract, checked on every response the tests receive through `httpRequest`: the status is one the
// operation lists in the server's own /openapi.json, and a JSON body matches that response's schema. A
// mismatch fails the request (and so the test) with the operation, the status and what did not match.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Doc = { paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>> };

interface Contract {
  ajv: Ajv2020;
  operations: { re: RegExp; template: string; methods: Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }> }[];
}

const contracts = new Map<string, Promise<Contract | null>>();

const pointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

async function load(baseUrl: string): Promise<Contract | null> {
  let doc: Doc;
  try {
    const res = await fetch(`${baseUrl}/openapi.json`);
    if (!res.ok) return null;
    doc = (await res.json()) as Doc;
  } catch {
    return null;
  }
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const operations = Object.entries(doc.paths ?? {}).map(([template, methods]) => ({
    template,
    methods,
    re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
  }));
  return { ajv, operations };
}

/** Why a response breaks the contract, or null when it keeps it (or is outside any documented operation). */
export async function contractViolation(
  baseUrl: string,
  method: string,
  url: string,
  res: { status: number; contentType: string | null; body: unknown; text: string },
): Promise<string | null> {
  if (method === 'HEAD' || method === 'OPTIONS') return null;
  let c = contracts.get(baseUrl);
  if (!c) {
    c = load(baseUrl);
    contracts.set(baseUrl, c);
  }
  const contract = await c;
  if (!contract) return null;
  const path = url.split('?')[0] ?? '';
  const op = contract.operations.find((o) => o.re.test(path));
  const m = method.toLowerCase();
  // Unknown paths (404) and methods a path does not have (405) are outside every operation.
  const operation = op?.methods[m];
  if (!op || !operation) return null;
  const responses = operation.responses ?? {};
  const status = String(res.status);
  const response = responses[status] ?? responses[`${status[0]}XX`] ?? responses.default;
  if (!response)
    return `${method} ${op.template} answered ${status}, which the document does not list (it lists ${Object.keys(responses).join(', ')}): ${res.text.slice(0, 300)}`;
  if (!res.contentType?.includes('json')) return null;
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return null;
  const ref = `openapi#/paths/${pointer(op.template)}/${m}/responses/${pointer(status in responses ? status : responses[`${status[0]}XX`] ? `${status[0]}XX` : 'default')}/content/${pointer('application/json')}/schema`;
  const validate = contract.ajv.getSchema(ref);
  if (!validate) return `${method} ${op.template} ${status}: no schema at ${ref}`;
  if (validate(res.body)) return null;
  return `${method} ${op.template} ${status}: the body does not match the document: ${contract.ajv.errorsText(validate.errors)}; body ${res.text.slice(0, 300)}`;
}
