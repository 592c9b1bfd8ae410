// Package debugtest drives flagsnap's pages in a real headless Chromium.
// It is a module of its own, like bench/ld, so that the browser driver it
// uses never enters the library's dependencies.
//
// TestDebugPageInABrowser loads flagsnap.DebugHandler's page, fills and
// submits its forms, and reads what they show from the DOM, including the
// mark of a flag an override file defines.
//
// TestOFREPInABrowser loads a page made with OpenFeature's web SDK and
// OFREP web provider (directory ofrepweb, bundled by esbuild) that reads
// its flags from `flagsnap serve --http --allow-origin`: the page of the
// allowed origin shows what the in-process provider evaluates and follows
// a change of the flag file through the event stream; a page of another
// origin is refused by the browser's CORS checks. The test builds the
// command, and installs the page's npm packages with npm ci when
// ofrepweb/node_modules is missing (CI installs them beforehand with
// npm ci --prefix debugtest/ofrepweb); it skips, saying so, without npm.
//
// The tests look for the browser in FLAGSNAP_CHROMIUM, then for chromium,
// chromium-browser or google-chrome on PATH, and skip, saying so, when
// there is none.
package debugtest
