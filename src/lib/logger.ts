// pino: JSON lines, or pretty on a terminal. Keys, tokens and Authorization are redacted.
import pino, { type Logger } from 'pino';
import type { Config } from '../config.ts';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'key',
  '*.key',
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

/** Removes secrets that may sit inside free text (error messages from libraries, URLs). */
export function scrubSecrets(text: string): string {
  return text
    .replace(/ink_pub_[0-9A-Za-z]{32}/g, 'ink_pub_[redacted]')
    .replace(/ink_[0-9A-Za-z]{40}/g, 'ink_[redacted]')
    .replace(/(Bearer\s+)[^\s"']+/gi, '$1[redacted]')
    .replace(/\b(gh[pousr]_[0-9A-Za-z]{20,}|github_pat_[0-9A-Za-z_]{20,}|glpat-[0-9A-Za-z_-]{20,}|sk-[0-9A-Za-z_-]{20,})\b/g, '[redacted]')
    .replace(/(\/\/)([^/@\s:]+):([^/@\s]+)@/g, '$1$2:[redacted]@');
}

export function createLogger(config: Pick<Config, 'logLevel' | 'logPretty'>): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: {
      log(obj) {
        if (obj.err instanceof Error) {
          const e = obj.err;
          return { ...obj, err: { type: e.name, message: scrubSecrets(e.message), stack: e.stack ? scrubSecrets(e.stack) : undefined } };
        }
        return obj;
      },
    },
    ...(config.logPretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
  });
}
