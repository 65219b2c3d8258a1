// The OpenAPI document of the API as the server serves it at /openapi.json, built without listening (for
// the client generator, scripts/gen-client.ts, and the test that keeps the generated client in step).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import { createContext } from '../context.ts';
import { migrate, openDatabase } from '../db/index.ts';
import { createLogger } from '../lib/logger.ts';
import { buildApp } from './app.ts';

/**
 * The document of a server with the default configuration (the limits the document states are the
 * defaults), on a throwaway SQLite database. The same input always gives the same document.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-openapi-'));
  // The ingest writer runs in-thread: nothing is ingested, and no worker thread need start and stop.
  const config = loadConfig({ LOG_LEVEL: 'silent', INKWELL_LOG_PRETTY: '0', INKWELL_DATA_DIR: dir, INKWELL_ANALYTICS_INGEST_WORKER: '0' });
  const db = openDatabase({ sqlitePath: path.join(dir, 'inkwell.db') });
  try {
    await migrate(db);
    const app = await buildApp(createContext(config, db, createLogger(config)));
    try {
      await app.ready();
      return structuredClone(app.swagger()) as unknown as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
