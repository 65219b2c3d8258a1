export function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no dashboard page here. Go to <a href="/analytics">Analytics</a>.
      </p>
    </section>
  );
}
