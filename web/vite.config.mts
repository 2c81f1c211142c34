import { defineConfig } from 'vite';

/**
 * The web client's build (docs/architecture/web-client.md). The server serves
 * web/dist/index.html at `/` and the hashed files of web/dist/assets under
 * /static/assets/ as immutable, so every asset URL starts with /static/.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/static/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill for <link rel=modulepreload> is for browsers older than the target.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: { proxy: { '/json': 'http://127.0.0.1:9991', '/login': 'http://127.0.0.1:9991', '/user_uploads': 'http://127.0.0.1:9991' } },
});
