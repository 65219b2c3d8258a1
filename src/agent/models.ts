// Model registry: `<provider>/<model>` ids → AI SDK language models.
//   anthropic/…          ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
//   openai/…             OPENAI_API_KEY, OPENAI_BASE_URL
//   openai-compatible/…  OPENAI_COMPATIBLE_BASE_URL (required), OPENAI_COMPATIBLE_API_KEY (optional)
// `openai/…` uses the Chat Completions protocol (`openai.chat(id)`), the same wire protocol as
// `openai-compatible/…`, so one fake server in tests covers both and proxies that only speak Chat
// Completions work for OpenAI too.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { wrapLanguageModel } from 'ai';
import type { Config } from '../config.ts';

export const PROVIDERS = ['anthropic', 'openai', 'openai-compatible'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export function parseModelId(modelId: string): { provider: ProviderName; model: string } | null {
  const i = modelId.indexOf('/');
  if (i <= 0 || i === modelId.length - 1) return null;
  const provider = modelId.slice(0, i);
  if (!(PROVIDERS as readonly string[]).includes(provider)) return null;
  return { provider: provider as ProviderName, model: modelId.slice(i + 1) };
}

/** Null when the model's provider is configured; otherwise a message for a 400 `model_not_configured`. Never includes a secret. */
export function modelConfigError(modelId: string, config: Config): string | null {
  const parsed = parseModelId(modelId);
  if (!parsed) {
    const provider = modelId.includes('/') ? modelId.slice(0, modelId.indexOf('/')) : '';
    if (provider && !(PROVIDERS as readonly string[]).includes(provider)) {
      return `Unknown model provider "${provider}" in "${modelId}": use one of ${PROVIDERS.map((p) => `${p}/…`).join(', ')}`;
    }
    return `Model "${modelId}" must look like <provider>/<model>, e.g. anthropic/claude-sonnet-4-5`;
  }
  const m = config.model;
  switch (parsed.provider) {
    case 'anthropic':
      return m.anthropicApiKey || m.anthropicBaseUrl ? null : `Model "${modelId}" needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) to be set on the server`;
    case 'openai':
      return m.openaiApiKey || m.openaiBaseUrl ? null : `Model "${modelId}" needs OPENAI_API_KEY (or OPENAI_BASE_URL) to be set on the server`;
    case 'openai-compatible':
      return m.openaiCompatibleBaseUrl ? null : `Model "${modelId}" needs OPENAI_COMPATIBLE_BASE_URL (e.g. http://localhost:11434/v1) to be set on the server`;
  }
}

export class ModelNotConfiguredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelNotConfiguredError';
  }
}

// Sent when a base URL is configured without a key (a local proxy that does not check keys).
const NO_KEY = 'not-set';

/** The provider-level model object (what middleware wraps). */
export type ProviderModel = Parameters<typeof wrapLanguageModel>[0]['model'];

/** The AI SDK model for an id; throws ModelNotConfiguredError when modelConfigError says so. */
export function createLanguageModel(modelId: string, config: Config): ProviderModel {
  const problem = modelConfigError(modelId, config);
  if (problem) throw new ModelNotConfiguredError(problem);
  const { provider, model } = parseModelId(modelId)!;
  const m = config.model;
  switch (provider) {
    case 'anthropic':
      return createAnthropic({ apiKey: m.anthropicApiKey ?? NO_KEY, ...(m.anthropicBaseUrl ? { baseURL: m.anthropicBaseUrl } : {}) })(model);
    case 'openai':
      return createOpenAI({ apiKey: m.openaiApiKey ?? NO_KEY, ...(m.openaiBaseUrl ? { baseURL: m.openaiBaseUrl } : {}) }).chat(model);
    case 'openai-compatible':
      return createOpenAICompatible({
        name: 'openai-compatible',
        baseURL: m.openaiCompatibleBaseUrl!,
        ...(m.openaiCompatibleApiKey ? { apiKey: m.openaiCompatibleApiKey } : {}),
        includeUsage: true,
      })(model);
  }
}
