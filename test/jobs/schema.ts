// Validators for the hosted interface schema (a copy of the reference hosted-admin.openapi.json).
import fs from 'node:fs';
import path from 'node:path';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';

const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

const SPEC_PATH = path.resolve(import.meta.dirname, 'fixtures/hosted-admin.openapi.json');

const doc = JSON.parse(fs.readFileSync(SPEC_PATH, 'utf8')) as { components: { schemas: Record<string, object> } };
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

/** The hosted AgentJob schema, with every property required (our responses always carry them all). */
const agentJob = doc.components.schemas.AgentJob as { properties: Record<string, object> };
const validateJob = ajv.compile({ ...agentJob, required: Object.keys(agentJob.properties) });
const validateError = ajv.compile(doc.components.schemas.Error as object);

export function agentJobErrors(value: unknown): string | null {
  return validateJob(value) ? null : ajv.errorsText(validateJob.errors);
}

export function hostedErrorErrors(value: unknown): string | null {
  return validateError(value) ? null : ajv.errorsText(validateError.errors);
}
