// The secret a code host signs its webhook deliveries with, per project. It is derived, not stored:
// HMAC(server secret, project id, generation), where only the generation (random, replaced by every
// `inkwell project set --code-host-webhook`) is in the database. A copy of the database alone cannot sign a
// delivery. The server secret is INKWELL_SECRET_KEY, or on the embedded database a file in the data directory
// made on first use (processes sharing that directory share it).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';

export class ServerSecretError extends Error {}

const FILE = 'server-secret';

/** The server secret (bytes). Throws ServerSecretError with what to set when there is none to use. */
export function serverSecret(config: Pick<Config, 'secretKey' | 'databaseUrl' | 'dataDir'>): Buffer {
  if (config.secretKey !== undefined) {
    if (config.secretKey.length < 32) throw new ServerSecretError('INKWELL_SECRET_KEY must be at least 32 characters long');
    return Buffer.from(config.secretKey, 'utf8');
  }
  if (config.databaseUrl) {
    throw new ServerSecretError(
      'set INKWELL_SECRET_KEY (at least 32 random characters, the same for every Inkwell process) to use code-host webhooks with PostgreSQL',
    );
  }
  const file = path.join(config.dataDir, FILE);
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    // wx: of two processes making it at once, one writes it and the other reads what that one wrote.
    fs.writeFileSync(file, crypto.randomBytes(32), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return fs.readFileSync(file);
}

/** The webhook secret of a project's current generation (what the code host is given). */
export function hookSecret(server: Buffer, projectId: string, generation: string): string {
  const mac = crypto.createHmac('sha256', server).update(`code-host-hook\0${projectId}\0${generation}`).digest('base64url');
  return `ihk_${mac}`;
}
