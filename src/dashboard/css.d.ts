// CSS imported for its side effect: esbuild bundles it into the dashboard's stylesheet.
declare module '*.css';
