/// <reference types="vitest/config" />
// Vite builds ui/dist for `aura serve`. No React plugin: Vite's own transform (oxc) compiles
// TSX with the automatic JSX runtime, which is all a production bundle needs.
import { defineConfig } from 'vite';

export default defineConfig({
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The server's CSP allows script and style from 'self' only: no inline script, no
    // data: modules. Keep every asset a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
