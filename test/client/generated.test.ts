// The generated API types (src/client/openapi.ts) are those of the live OpenAPI document, and the client's
// types taken from them are the server's own shapes: the document and the code cannot drift apart.
import fs from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { CLIENT_TYPES_PATH, clientTypesSource } from '../../scripts/gen-client.ts';
import type { RawEvent } from '../../src/analytics/import/logparse.ts';
import type { ExportQuery, IngestEventInput, PathCounts, VisitorsPage } from '../../src/client/analytics.ts';
import type { ResponseBody } from '../../src/client/api.ts';
import type { CreateJobInput, Job, JobEvent, JobList, ListJobsQuery } from '../../src/client/index.ts';
import type { ErrorCode } from '../../src/errors.ts';
import type { ErrorBody as ServerErrorBody } from '../../src/http/errors.ts';
import { openApiDocument } from '../../src/http/openapi-document.ts';
import type { JobEvent as ServerJobEvent } from '../../src/jobs/events.ts';
import type { JobView } from '../../src/jobs/view.ts';

describe('generated client types', () => {
  it('src/client/openapi.ts is what openapi-typescript makes of the live document', async () => {
    const expected = await clientTypesSource(await openApiDocument());
    const committed = fs.readFileSync(CLIENT_TYPES_PATH, 'utf8');
    if (committed !== expected) {
      expect.fail('src/client/openapi.ts differs from the OpenAPI document the server serves: run `npm run gen:client` and commit the result');
    }
  });

  it("the client's types are the server's shapes (checked by tsc)", () => {
    expectTypeOf<Job>().toEqualTypeOf<JobView>();
    expectTypeOf<JobList>().toEqualTypeOf<{ jobs: JobView[]; nextCursor: string | null; hasMore: boolean }>();
    expectTypeOf<JobEvent>().toEqualTypeOf<ServerJobEvent>();
    expectTypeOf<CreateJobInput>().toHaveProperty('prompt').toEqualTypeOf<string>();
    expectTypeOf<ListJobsQuery>().toEqualTypeOf<{ status?: JobView['status']; limit?: number; cursor?: string }>();
    // The log parsers produce exactly what the ingest endpoint takes.
    expectTypeOf<IngestEventInput>().toEqualTypeOf<RawEvent>();
    expectTypeOf<PathCounts>().toEqualTypeOf<{ path: string; human: number; ai: number; total: number }>();
    expectTypeOf<VisitorsPage>().toHaveProperty('hasMore').toEqualTypeOf<boolean>();
    expectTypeOf<ExportQuery>().toEqualTypeOf<{ dateFrom?: string; dateTo?: string; limit?: number; offset?: number }>();
    // An error body of the document is one the server's type describes, its code one of the registry's.
    expectTypeOf<ResponseBody<'/v2/agent/{projectId}/job/{id}', 'get', 404>>().toMatchTypeOf<ServerErrorBody>();
    expectTypeOf<ResponseBody<'/v2/agent/{projectId}/job/{id}', 'get', 404>['code']>().toEqualTypeOf<'project_not_found' | 'job_not_found' | 'not_found'>();
    expectTypeOf<ResponseBody<'/v2/agent/{projectId}/job/{id}', 'get', 404>['code']>().toMatchTypeOf<ErrorCode>();
  });
});
