// Placeholder until the jobs pages land: says where jobs are today.
export function Jobs() {
  return (
    <section>
      <h1>Jobs</h1>
      <p>The job list and job pages are not in the dashboard yet.</p>
      <p>
        Meanwhile, <code>npx inkwell job list --project prj_…</code> lists the jobs and <code>npx inkwell job create --project prj_… "…" --wait</code> starts
        one and follows its steps.
      </p>
    </section>
  );
}
