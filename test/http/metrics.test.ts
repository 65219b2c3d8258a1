// The request-duration histogram (src/http/metrics.ts) gives the registry exactly what prom-client's own
// Histogram gives for the same observations.
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DurationHistogram } from '../../src/http/metrics.ts';

const BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];
const LABELS = ['method', 'route', 'status'] as const;

function pair() {
  const ours = new DurationHistogram('t_duration_seconds', 'Test durations', LABELS, BUCKETS);
  const oursRegistry = new client.Registry();
  oursRegistry.registerMetric(ours as unknown as client.Metric);
  const theirsRegistry = new client.Registry();
  const theirs = new client.Histogram({
    name: 't_duration_seconds',
    help: 'Test durations',
    labelNames: LABELS,
    buckets: BUCKETS,
    registers: [theirsRegistry],
  });
  return { ours, oursRegistry, theirs, theirsRegistry };
}

describe('DurationHistogram', () => {
  it('prints the same Prometheus text and JSON as prom-client’s Histogram for the same observations', async () => {
    const { ours, oursRegistry, theirs, theirsRegistry } = pair();
    const series: [string, string, string][] = [
      ['GET', '/v2/agent/:projectId/job/:id', '200'],
      ['GET', '/v2/agent/:projectId/job/:id', '404'],
      ['POST', 'unmatched', '404'],
      ['GET', 'route "with" quotes\\and\nnewline', '500'],
    ];
    // On the bounds, between them, above the top, zero, and many in one bucket.
    const values = [0, 0.001, 0.0010001, 0.004, 0.005, 0.05, 0.2, 1, 4.9, 5, 5.1, 120, ...Array.from({ length: 50 }, (_, i) => i / 997)];
    for (const [i, v] of values.entries()) {
      const labels = series[i % series.length] as [string, string, string];
      ours.series(...labels).observe(v);
      theirs.labels(...labels).observe(v);
    }
    expect(await oursRegistry.metrics()).toBe(await theirsRegistry.metrics());
    expect(await oursRegistry.getMetricsAsJSON()).toEqual(await theirsRegistry.getMetricsAsJSON());
  });

  it('keeps one series per label set, ignores values that are not finite, and resets', async () => {
    const { ours, oursRegistry } = pair();
    const a = ours.series('GET', '/a', '200');
    expect(ours.series('GET', '/a', '200')).toBe(a);
    expect(ours.series('GET', '/a', '201')).not.toBe(a);
    a.observe(0.002);
    a.observe(Number.NaN);
    a.observe(Number.POSITIVE_INFINITY);
    expect({ count: a.count, sum: a.sum }).toEqual({ count: 1, sum: 0.002 });
    const text = await oursRegistry.metrics();
    expect(text).toContain('# TYPE t_duration_seconds histogram');
    expect(text).toContain('t_duration_seconds_bucket{le="0.001",method="GET",route="/a",status="200"} 0');
    expect(text).toContain('t_duration_seconds_bucket{le="0.005",method="GET",route="/a",status="200"} 1');
    expect(text).toContain('t_duration_seconds_bucket{le="+Inf",method="GET",route="/a",status="200"} 1');
    expect(text).toContain('t_duration_seconds_count{method="GET",route="/a",status="200"} 1');
    oursRegistry.resetMetrics();
    expect(await oursRegistry.metrics()).not.toContain('t_duration_seconds_count');
  });
});
