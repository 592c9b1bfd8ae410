package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// testbedEnv names a checkout of open-feature/flagd-testbed.
const testbedEnv = "FLAGD_TESTBED_DIR"

// Where the testbed's control program serves its documents: the merged flag
// files under one name, the others under their own.
const (
	allFlagsURI    = "flags/allFlags.json"
	rawFlagsPrefix = "rawflags/"
)

// testbed is what the scenarios need from the testbed checkout, read once.
type testbed struct {
	dir      string
	features string
	allFlags []byte            // every flags/*.json but selector-*, deep-merged
	raw      map[string][]byte // flags/<name> by "rawflags/<name>"
	configs  map[string]launchpadConfig
}

// launchpadConfig is one of launchpad/configs/*.json: what a flagd server
// serves and the static context it injects.
type launchpadConfig struct {
	Sources []struct {
		URI string `json:"uri"`
	} `json:"sources"`
	ContextValue        map[string]any `json:"context-value"`
	DisableSyncMetadata bool           `json:"disable-sync-metadata"`
	ServerCertPath      string         `json:"server-cert-path"`
}

// findTestbed returns the testbed directory, skipping the test when there
// is none, with where it looked and what to set: once in full, and the
// tests after it refer to that. A FLAGD_TESTBED_DIR that names no testbed
// fails instead: a typo must not quietly turn the conformance suite off.
//
// A relative FLAGD_TESTBED_DIR is taken from the module root, where
// `go test ./...` and .ci/run are run: go test runs each package in its
// own directory, from which the path as typed would name nothing.
func findTestbed(t *testing.T) string {
	t.Helper()
	root, rootErr := moduleRoot()
	if rootErr != nil {
		root = ""
	}
	env, _ := os.LookupEnv(testbedEnv)
	dir, skip, fail := locateTestbed(env, root)
	switch {
	case fail != "":
		t.Fatal(fail)
	case skip != "":
		testbedSkip.Do(func() { testbedSkip.by = t.Name() })
		if testbedSkip.by != t.Name() {
			skip = "flagd-testbed not found (see why in the skip of " + testbedSkip.by + ")"
		}
		t.Skip(skip)
	}
	return dir
}

// testbedSkip is the first test that said why the testbed is missing.
var testbedSkip struct {
	sync.Once
	by string
}

// locateTestbed is where the testbed is, from FLAGD_TESTBED_DIR (env) and
// the module root (root, "" when unknown), or why there is none: skip when
// there is no testbed to run, fail when the variable names no testbed.
func locateTestbed(env, root string) (dir, skip, fail string) {
	if env != "" {
		dir = env
		if !filepath.IsAbs(dir) && root != "" {
			dir = filepath.Join(root, dir)
		}
		if !isTestbed(dir) {
			return "", "", fmt.Sprintf("%s=%s: not a flagd-testbed checkout (no gherkin/, flags/ and launchpad/configs/ in %s)", testbedEnv, env, dir)
		}
		return dir, "", ""
	}
	if root == "" {
		return "", fmt.Sprintf("flagd-testbed not found: no module root to look beside; set %s to a checkout of %s", testbedEnv, testbedRepo), ""
	}
	dir = filepath.Join(filepath.Dir(root), "shared", "flagd-testbed")
	if isTestbed(dir) {
		return dir, "", ""
	}
	return "", fmt.Sprintf("flagd-testbed not found at %s; set %s to a checkout of %s to run the conformance suite", dir, testbedEnv, testbedRepo), ""
}

// testbedRepo is where the testbed is published.
const testbedRepo = "https://github.com/open-feature/flagd-testbed"

func isTestbed(dir string) bool {
	for _, sub := range []string{"gherkin", "flags", filepath.Join("launchpad", "configs")} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// moduleRoot is the nearest directory at or above the working directory
// holding a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func loadTestbed(dir string) (*testbed, error) {
	tb := &testbed{
		dir:      dir,
		features: filepath.Join(dir, "gherkin"),
		raw:      map[string][]byte{},
		configs:  map[string]launchpadConfig{},
	}
	files, err := filepath.Glob(filepath.Join(dir, "flags", "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	merged := map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(f)
		tb.raw[rawFlagsPrefix+name] = b
		if strings.HasPrefix(name, "selector-") {
			continue
		}
		doc, err := decodeDoc(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		deepMerge(merged, doc)
	}
	if tb.allFlags, err = json.Marshal(merged); err != nil {
		return nil, err
	}

	configs, err := filepath.Glob(filepath.Join(dir, "launchpad", "configs", "*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range configs {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var c launchpadConfig
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(c.Sources) == 0 {
			return nil, fmt.Errorf("%s: no sources", f)
		}
		tb.configs[strings.TrimSuffix(filepath.Base(f), ".json")] = c
	}
	if len(tb.configs) == 0 {
		return nil, fmt.Errorf("%s: no launchpad configurations", filepath.Join(dir, "launchpad", "configs"))
	}
	return tb, nil
}

// decodeDoc keeps numbers as written: 0.0 and 100.0 must reach the provider
// as they are in the files, not as Go float64s turned back into text.
func decodeDoc(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// deepMerge merges src into dst the way the testbed's control program builds
// its single flag file: objects are merged key by key at every depth, so the
// "$evaluators" of one file are visible to the flags of another; anything
// else from src replaces what dst has.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// document returns what a flagd server answers for a source URI.
func (tb *testbed) document(uri string) ([]byte, error) {
	if uri == allFlagsURI {
		return tb.allFlags, nil
	}
	if b, ok := tb.raw[uri]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("launchpad source %q: no such flag file in %s", uri, filepath.Join(tb.dir, "flags"))
}

// sets returns the documents a server with config c serves, by selector.
// Calls without a selector get the first source, which for the testbed's
// configurations is the merged flag set.
func (tb *testbed) sets(c launchpadConfig) (map[string][]byte, error) {
	out := make(map[string][]byte, len(c.Sources)+1)
	for i, s := range c.Sources {
		doc, err := tb.document(s.URI)
		if err != nil {
			return nil, err
		}
		out[s.URI] = doc
		if i == 0 {
			out[""] = doc
		}
	}
	return out, nil
}

// toggleChangingFlag is the control program's "change": it flips
// changing-flag's default variant between foo and bar. Documents without
// the flag come back unchanged.
func toggleChangingFlag(doc []byte) ([]byte, bool, error) {
	d, err := decodeDoc(doc)
	if err != nil {
		return nil, false, err
	}
	flags, _ := d["flags"].(map[string]any)
	flag, ok := flags["changing-flag"].(map[string]any)
	if !ok {
		return doc, false, nil
	}
	if flag["defaultVariant"] == "foo" {
		flag["defaultVariant"] = "bar"
	} else {
		flag["defaultVariant"] = "foo"
	}
	out, err := json.Marshal(d)
	return out, true, err
}

// scenarioDirs hands out one fresh directory per scenario below a base that
// is short enough for unix socket paths (at most 107 bytes on Linux).
type scenarioDirs struct {
	base string
	n    int
}

func newScenarioDirs(t *testing.T) *scenarioDirs {
	t.Helper()
	base, err := os.MkdirTemp("", "fse2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(base); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("removing %s: %v", base, err)
		}
	})
	return &scenarioDirs{base: base}
}

func (d *scenarioDirs) next() (string, error) {
	d.n++
	dir := filepath.Join(d.base, fmt.Sprintf("s%d", d.n))
	return dir, os.Mkdir(dir, 0o700)
}
