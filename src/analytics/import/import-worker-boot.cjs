// Bootstrap of an import thread (import-parallel.ts), as ingest-worker-boot.cjs is the ingest writer's: compiled,
// next to the bundled entry (dist/import-worker.js); from the sources, with the TypeScript loader registered in
// this thread first.
const fs = require('node:fs');
const path = require('node:path');

if (fs.existsSync(path.join(__dirname, 'import-worker.ts'))) {
  require('tsx/cjs/api').register();
  require('./import-worker.ts');
} else {
  import('./import-worker.js');
}
