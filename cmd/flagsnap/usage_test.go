package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// usageFile has a flag of every verdict: used with two variants (tier),
// never evaluated (legacy), one variant (banner), disabled and evaluated
// (dark: always the caller's default).
const usageFile = `{"flags": {
  "tier":   {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
             "targeting": {"if": [{"==": [{"var": "plan"}, "gold"]}, "on"]}},
  "legacy": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "banner": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},
  "dark":   {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"}
}}`

// snapshot writes the usage of a provider serving doc after evaluate has
// run, as a service's handler would serve it, and the flag file.
func snapshot(t *testing.T, doc string, evaluate func(p *flagsnap.Provider)) (flags, usage string) {
	t.Helper()
	p, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(doc)), flagsnap.WithoutEnv())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	evaluate(p)
	b, err := json.Marshal(p.Usage())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	flags, usage = filepath.Join(dir, "flags.json"), filepath.Join(dir, "usage.json")
	for path, data := range map[string][]byte{flags: []byte(doc), usage: b} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return flags, usage
}

func evaluateSome(p *flagsnap.Provider) {
	ctx := context.Background()
	for i := range 10 {
		plan := map[string]any{"plan": []string{"gold", "free"}[i%2]}
		p.BooleanEvaluation(ctx, "tier", false, plan)
		p.StringEvaluation(ctx, "banner", "", nil)
	}
	for range 3 {
		p.BooleanEvaluation(ctx, "dark", false, nil)
		p.BooleanEvaluation(ctx, "new-chekout", false, nil)
	}
	p.BooleanEvaluation(ctx, "old-promo", false, nil)
}

func TestUsageListsWhatIsStale(t *testing.T) {
	flags, usage := snapshot(t, usageFile, evaluateSome)
	stdout, stderr, code := runCmd(t, "usage", flags, usage)
	wantStatus(t, code, exitNegative, stdout, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	want := []string{
		"never evaluated  legacy",
		"missing          new-chekout  asked 3 times",
		"missing          old-promo    asked once",
		`one variant      banner       "red" in all 10 evaluations, the last at `,
		"one variant      dark         the caller's default in all 3 evaluations, the last at ",
		flags + ": 3 of 4 flags stale, 2 missing keys, since ",
	}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to begin %q", i+1, lines[i], w)
		}
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

// A flag that only bulk evaluations read is told from one read by code
// and from one no one read.
func TestUsageOnlyInBulk(t *testing.T) {
	flags, usage := snapshot(t, usageFile, func(p *flagsnap.Provider) {
		evaluateSome(p)
		for range 2 {
			if _, err := p.EvaluateAll(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}
	})
	stdout, stderr, code := runCmd(t, "usage", flags, usage)
	wantStatus(t, code, exitNegative, stdout, stderr)
	if !strings.HasPrefix(stdout, "only in bulk     legacy       read only by bulk evaluations, 2 times, the last at ") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if strings.Contains(stdout, "never evaluated") {
		t.Errorf("a flag read in bulk is said never evaluated:\n%s", stdout)
	}
}

func TestUsageNothingStale(t *testing.T) {
	doc := `{"flags": {"tier": ` + strings.SplitN(strings.SplitN(usageFile, `"tier":   `, 2)[1], "},\n", 2)[0] + `}}}`
	flags, usage := snapshot(t, doc, func(p *flagsnap.Provider) {
		for _, plan := range []string{"gold", "free"} {
			p.BooleanEvaluation(context.Background(), "tier", false, map[string]any{"plan": plan})
		}
	})
	stdout, stderr, code := runCmd(t, "usage", flags, usage)
	wantStatus(t, code, exitOK, stdout, stderr)
	if !strings.Contains(stdout, ": nothing stale: 1 flag, every one evaluated") {
		t.Errorf("stdout: %s", stdout)
	}
}

func TestUsageJSONFormat(t *testing.T) {
	flags, usage := snapshot(t, usageFile, evaluateSome)
	stdout, stderr, code := runCmd(t, "usage", flags, usage, "--format", "json")
	wantStatus(t, code, exitNegative, stdout, stderr)
	var r usageReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Flags != 4 || len(r.Stale) != 5 || r.Stale[0].Key != "legacy" || r.Stale[3].Variant != "red" || r.Stale[4].Variant != "" || r.Since.IsZero() {
		t.Errorf("report: %+v", r)
	}
}

// Flags the snapshot has and the file does not are said on stderr; flags
// the file has and the snapshot does not are never evaluated.
func TestUsageOfAnotherFile(t *testing.T) {
	_, usage := snapshot(t, usageFile, evaluateSome)
	other := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(other, []byte(`{"flags": {"tier": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
	  "fresh": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCmd(t, "usage", other, usage)
	wantStatus(t, code, exitNegative, stdout, stderr)
	if !strings.HasPrefix(stdout, "never evaluated  fresh ") || !strings.Contains(stdout, "not in the snapshot") {
		t.Errorf("stdout: %s", stdout)
	}
	wantOneLine(t, stderr, "3 flags of the snapshot are not in", "banner, dark, legacy")
}

func TestUsageFromStdin(t *testing.T) {
	flags, usage := snapshot(t, usageFile, evaluateSome)
	f, err := os.Open(usage)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = stdin }()
	stdout, stderr, code := runCmd(t, "usage", flags, "-")
	wantStatus(t, code, exitNegative, stdout, stderr)
	if !strings.HasPrefix(stdout, "never evaluated  legacy") {
		t.Errorf("stdout: %s", stdout)
	}
}

func TestUsageBadInput(t *testing.T) {
	flags, usage := snapshot(t, usageFile, evaluateSome)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"flags": {}, "missing": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"one argument", []string{flags}, []string{"want FLAGS_FILE and USAGE_JSON, got 1"}},
		{"no flag file", []string{filepath.Join(dir, "nope.json"), usage}, []string{"nope.json", "no such file"}},
		{"no snapshot", []string{flags, filepath.Join(dir, "nope.json")}, []string{"nope.json", "no such file"}},
		{"a flag file for a snapshot", []string{flags, flags}, []string{"is not a usage snapshot"}},
		{"a snapshot of nothing", []string{flags, empty}, []string{`has no "since"`, "WithoutUsage"}},
		{"bad format", []string{flags, usage, "--format", "yaml"}, []string{"--format must be text, json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, append([]string{"usage"}, tt.args...)...)
			wantStatus(t, code, exitBadInput, stdout, stderr)
			wantOneLine(t, stderr, tt.want...)
		})
	}
}

func TestUsageHelp(t *testing.T) {
	stdout, _, code := runCmd(t, "usage", "--help")
	if code != exitOK || !strings.Contains(stdout, "Usage: flagsnap usage FLAGS_FILE USAGE_JSON") {
		t.Errorf("status %d, help:\n%s", code, stdout)
	}
	stdout, _, _ = runCmd(t, "--help")
	if !strings.Contains(stdout, "flagsnap usage FILE USAGE_JSON") {
		t.Errorf("the main help does not list usage:\n%s", stdout)
	}
}
