// Bootstrap of the ingest worker thread. Compiled (dist/, see bin/build.js), this file sits next to the
// bundled worker entry, plain JavaScript imported as it is. From the sources: loader hooks are per thread, so
// the TypeScript loader (tsx) is registered here too. Its CommonJS hooks run in this thread; the ESM ones
// (module.register) answer every import through a separate hooks thread, which made loading the writer's
// dependencies (Kysely's ~400 modules) take about twice as long. The modules the worker loads use no ESM-only syntax.
const fs = require('node:fs');
const path = require('node:path');

if (fs.existsSync(path.join(__dirname, 'ingest-worker.ts'))) {
  require('tsx/cjs/api').register();
  require('./ingest-worker.ts');
} else {
  import('./ingest-worker.js');
}
