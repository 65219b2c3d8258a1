// Bootstrap of the ingest worker thread: loader hooks are per thread, so the TypeScript loader (tsx) the
// main thread runs under is registered here too before the worker module is imported.
import { register } from 'tsx/esm/api';

register();
await import('./ingest-worker.ts');
