"""The pages in a real browser: headless Chromium driven over the DevTools protocol."""
