// The dashboard's pages, as URL patterns. The server answers each with the dashboard's index.html (the page
// itself is chosen in the browser: src/dashboard/app.tsx routes the same patterns). Shared by both sides so
// that a page added to the dashboard cannot be missing on the server.

/** Where a one-time sign-in link (`inkwell dashboard`) lands; `/sign-in` is the same page. */
export const SIGN_IN_PATH = '/signin';

export const DASHBOARD_PATHS = ['/', SIGN_IN_PATH, '/sign-in', '/analytics', '/jobs', '/jobs/:id', '/settings'] as const;

/** Where the built assets are served (hashed file names: cached for a year). */
export const ASSETS_PREFIX = '/assets/';
