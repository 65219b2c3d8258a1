// Process entry for `inkwell serve`: open and migrate the database, listen, run the worker, and shut
// down cleanly on SIGTERM / SIGINT.
import type { Config } from '../config.ts';
import { createContext, wireServices } from '../context.ts';
import { type Database, openFromConfig } from '../db/index.ts';
import { type Stoppable, startWorker } from '../jobs/worker-entry.ts';
import { createLogger } from '../lib/logger.ts';
import { type App, buildApp } from './app.ts';

export type Role = 'all' | 'api' | 'worker';

export interface RunningServer {
  app: App | null;
  db: Database;
  address: string | null;
  /** Idempotent: stop accepting, drain in-flight requests, stop the worker, close the database. */
  stop(): Promise<void>;
}

export async function startServer(config: Config, role: Role = 'all'): Promise<RunningServer> {
  const logger = createLogger(config);
  const db = await openFromConfig(config);
  const ctx = createContext(config, db, logger);
  let app: App | null = null;
  let worker: Stoppable | null = null;
  let address: string | null = null;
  try {
    const services = await wireServices(ctx);
    if (role !== 'worker') {
      app = await buildApp(ctx, services);
      address = await app.listen({ host: config.host, port: config.port });
    }
    if (role !== 'api') worker = await startWorker(ctx, services);
  } catch (err) {
    await app?.close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
  logger.info({ role, address, database: db.description }, 'inkwell started');

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('shutting down');
      // Stop taking requests and let in-flight ones finish (new requests on kept-alive connections get
      // 503 shutting_down); after the grace period, close whatever connections are left (SSE streams).
      const grace = setTimeout(() => {
        logger.warn({ graceMs: config.shutdownTimeoutMs }, 'shutdown grace period over: closing open connections');
        app?.server.closeAllConnections();
      }, config.shutdownTimeoutMs);
      try {
        await app?.close();
      } finally {
        clearTimeout(grace);
      }
      // Hand running jobs' leases back so they resume elsewhere, then close the database.
      await worker?.stop();
      await db.close();
      logger.info('stopped');
      logger.flush?.();
    })();
    return stopping;
  };
  return { app, db, address, stop };
}

/** Runs until SIGTERM / SIGINT, then stops gracefully and exits 0 (1 if stopping failed). */
export async function serveForever(config: Config, role: Role): Promise<void> {
  const server = await startServer(config, role);
  const onSignal = (signal: string) => {
    server.app?.log.info({ signal }, 'signal received');
    server
      .stop()
      .then(() => process.exit(0))
      .catch((err) => {
        server.app?.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  // `once`: a second signal while draining gets the default behaviour (immediate exit).
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
