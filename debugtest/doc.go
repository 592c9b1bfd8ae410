// Package debugtest drives flagsnap.DebugHandler's page in a real headless
// Chromium: it loads the page, fills and submits its forms, and reads what
// they show from the DOM. It is a module of its own, like bench/ld, so that
// the browser driver it uses never enters the library's dependencies.
//
// The test looks for the browser in FLAGSNAP_CHROMIUM, then for chromium,
// chromium-browser or google-chrome on PATH, and skips, saying so, when
// there is none.
package debugtest
