package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func simulateJSON(t *testing.T, args ...string) simReport {
	t.Helper()
	stdout, stderr, code := runCmd(t, append(append([]string{"simulate"}, args...), "--format", "json")...)
	wantStatus(t, code, exitOK, stdout, stderr)
	var r simReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	return r
}

func row(t *testing.T, rows []variantRow, variant string) variantRow {
	t.Helper()
	for _, r := range rows {
		if r.Variant == variant {
			return r
		}
	}
	t.Fatalf("no row for %q in %+v", variant, rows)
	return variantRow{}
}

func near(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance }

// 100,000 users, once: the shares of a 50/30/20 split are within a point
// of the weights under v2, and switching to v3 moves 1 − Σwᵢ² = 62% of
// the users to another bucket (independent hashes put a user in the same
// bucket with probability Σwᵢ²).
func TestSimulateSplitAndVersionSwitch(t *testing.T) {
	r := simulateJSON(t, testdata("flags.json"), "banner-color", "--against-fractional", "v3")
	if r.Users != 100000 || !r.Weighted || r.Fractional != "v2" {
		t.Fatalf("report %+v", r)
	}
	for variant, weight := range map[string]float64{"red": 0.5, "green": 0.3, "blue": 0.2} {
		got := row(t, r.Variants, variant)
		if got.Weight != weight || !near(got.Share, weight, 0.01) || !near(got.Deviation, 100*(got.Share-weight), 1e-9) {
			t.Errorf("%s: %+v, want a share within 1 point of %v", variant, got, weight)
		}
	}
	if len(r.Variants) != 3 {
		t.Errorf("outcomes other than the split: %+v", r.Variants)
	}
	if cs := r.ChiSquare; cs == nil || cs.DegreesOfFreedom != 2 || cs.PValue < 0.001 {
		t.Errorf("chi-square %+v: the shares should fit the weights", cs)
	}
	a := r.Against
	if a == nil || a.Fractional != "v3" {
		t.Fatalf("against %+v", a)
	}
	if want := 1 - (0.5*0.5 + 0.3*0.3 + 0.2*0.2); !near(a.ChangedPct, want, 0.01) {
		t.Errorf("v2 → v3 changed %.4f of the users, want %.2f ± 0.01", a.ChangedPct, want)
	}
	total, moved := 0, 0
	for _, tr := range a.Transitions {
		total += tr.Users
		if tr.From != tr.To {
			moved += tr.Users
		}
	}
	if total != r.Users || moved != a.Changed {
		t.Errorf("transitions hold %d users, %d of them moved; want %d, %d", total, moved, r.Users, a.Changed)
	}
}

// Moving weights from 50/50 to 60/40 under v2 moves exactly the users
// whose bucket lies in [50, 60) from "old" to "new": about 10%, and nobody
// the other way.
func TestSimulateWeightChange(t *testing.T) {
	r := simulateJSON(t, testdata("rollout-50-50.json"), "rollout", "--users", "20000", "--against", testdata("rollout-60-40.json"))
	a := r.Against
	if a == nil || !a.Weighted || a.File != testdata("rollout-60-40.json") || a.Fractional != "v2" {
		t.Fatalf("against %+v", a)
	}
	if !near(a.ChangedPct, 0.10, 0.01) {
		t.Errorf("changed %.4f of the users, want 0.10 ± 0.01", a.ChangedPct)
	}
	for _, tr := range a.Transitions {
		if tr.From == "new" && tr.To == "old" {
			t.Errorf("%d users moved from new to old", tr.Users)
		}
		if tr.From == "old" && tr.To == "new" && tr.Users != a.Changed {
			t.Errorf("old → new %d users, changed %d", tr.Users, a.Changed)
		}
	}
	if got := row(t, a.Variants, "new"); got.Weight != 0.6 || !near(got.Share, 0.6, 0.015) {
		t.Errorf("new after the change: %+v", got)
	}
}

// For 50/50, switching v2 → v3 changes the variant of half the users.
func TestSimulateVersionSwitchHalf(t *testing.T) {
	r := simulateJSON(t, testdata("rollout-50-50.json"), "rollout", "--users", "20000", "--against-fractional", "v3")
	if a := r.Against; a == nil || !near(a.ChangedPct, 0.5, 0.015) {
		t.Errorf("against %+v, want 0.5 ± 0.015 changed", a)
	}
	// Against itself nothing changes.
	r = simulateJSON(t, testdata("rollout-50-50.json"), "rollout", "--users", "2000", "--against", testdata("rollout-50-50.json"))
	if r.Against.Changed != 0 {
		t.Errorf("%d users changed against the same file", r.Against.Changed)
	}
}

func TestSimulateText(t *testing.T) {
	stdout, stderr, code := runCmd(t, "simulate", testdata("rollout-50-50.json"), "rollout", "--users", "1000", "--key-template", "acct-{i}-x", "--against", testdata("rollout-60-40.json"))
	wantStatus(t, code, exitOK, stdout, stderr)
	for _, want := range []string{
		"rollout in testdata/rollout-50-50.json, 1,000 users, fractional v2",
		"   weight  deviation\n",
		"chi-square ",
		"against testdata/rollout-60-40.json, fractional v2: ",
		"from \\ to",
		"█",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "" {
		t.Errorf("stderr for a short run: %q", stderr)
	}
	// The key template changes who the users are.
	other, _, _ := runCmd(t, "simulate", testdata("rollout-50-50.json"), "rollout", "--users", "1000")
	if stdout[:200] == other[:200] {
		t.Error("--key-template changed nothing")
	}
}

func TestSimulateWithoutFractional(t *testing.T) {
	r := simulateJSON(t, testdata("flags.json"), "new-checkout", "--users", "100", "--context", `{"email": "ada@example.com"}`)
	if r.Weighted || r.ChiSquare != nil || len(r.Variants) != 1 || r.Variants[0] != (variantRow{Variant: "on", Users: 100, Share: 1}) {
		t.Errorf("report %+v", r)
	}
	r = simulateJSON(t, testdata("flags.json"), "legacy-banner", "--users", "10")
	if len(r.Variants) != 1 || r.Variants[0].Variant != labelDisabled {
		t.Errorf("disabled flag: %+v", r.Variants)
	}
}

func TestOutcomeRows(t *testing.T) {
	weights := []weight{{"a", 0.25}, {"b", 0.5}, {"a", 0.25}}
	counts := map[string]int{"b": 40, "a": 45, labelDefault: 5, "(error GENERAL)": 10}
	want := []variantRow{
		{Variant: "a", Users: 45, Share: 0.45, Weight: 0.5, Deviation: -5},
		{Variant: "b", Users: 40, Share: 0.4, Weight: 0.5, Deviation: -10},
		{Variant: "(error GENERAL)", Users: 10, Share: 0.1, Deviation: 10},
		{Variant: labelDefault, Users: 5, Share: 0.05, Deviation: 5},
	}
	got := outcomeRows(counts, weights, 100)
	if len(got) != len(want) {
		t.Fatalf("rows %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Variant != w.Variant || g.Users != w.Users || g.Share != w.Share || g.Weight != w.Weight || !near(g.Deviation, w.Deviation, 1e-9) {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestChiSquare(t *testing.T) {
	fit := chiSquareTest([]variantRow{{Users: 5010, Weight: 0.5}, {Users: 4990, Weight: 0.5}}, 10000)
	if fit == nil || fit.DegreesOfFreedom != 1 || !near(fit.Statistic, 0.04, 1e-9) || !near(fit.PValue, 0.8415, 1e-3) {
		t.Errorf("fitting counts: %+v", fit)
	}
	skewed := chiSquareTest([]variantRow{{Users: 5500, Weight: 0.5}, {Users: 4500, Weight: 0.5}}, 10000)
	if skewed == nil || skewed.PValue > 1e-6 {
		t.Errorf("skewed counts: %+v", skewed)
	}
	outside := chiSquareTest([]variantRow{{Users: 5000, Weight: 0.5}, {Users: 4000, Weight: 0.5}, {Users: 1000}}, 10000)
	if outside == nil || outside.PValue != 0 || outside.Statistic != -1 {
		t.Errorf("users outside the split: %+v", outside)
	}
	if one := chiSquareTest([]variantRow{{Users: 10, Weight: 1}}, 10); one != nil {
		t.Errorf("one bucket: %+v", one)
	}
}

func TestSimulateCSV(t *testing.T) {
	stdout, stderr, code := runCmd(t, "simulate", testdata("rollout-50-50.json"), "rollout", "--users", "1000", "--against", testdata("rollout-60-40.json"), "--format", "csv")
	wantStatus(t, code, exitOK, stdout, stderr)
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, stdout)
	}
	tables := map[string]int{}
	users := 0
	for _, rec := range records[1:] {
		tables[rec[0]]++
		if rec[0] == "transition" {
			var n int
			if err := json.Unmarshal([]byte(rec[3]), &n); err != nil {
				t.Fatal(err)
			}
			users += n
		}
	}
	if strings.Join(records[0], ",") != "table,variant,to,users,share,weight,deviation" || tables["distribution"] != 2 || tables["against"] != 2 || tables["transition"] < 2 || users != 1000 {
		t.Errorf("records %v", records)
	}
}

// svgChart is what the tests read back from the SVG.
type svgChart struct {
	XMLName xml.Name `xml:"svg"`
	Rects   []struct {
		Class   string `xml:"class,attr"`
		Variant string `xml:"data-variant,attr"`
		Width   string `xml:"width,attr"`
	} `xml:"rect"`
}

func readSVG(t *testing.T, path string) (svgChart, map[string]int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Strictly well-formed: every token of the document decodes.
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := dec.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("SVG is not XML: %v\n%s", err, data)
			}
			break
		}
	}
	var chart svgChart
	if err := xml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	classes := map[string]int{}
	for _, r := range chart.Rects {
		classes[r.Class]++
	}
	return chart, classes
}

func TestSimulateSVG(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "split.svg")
	stdout, stderr, code := runCmd(t, "simulate", testdata("flags.json"), "banner-color", "--users", "3000", "--svg", out)
	wantStatus(t, code, exitOK, stdout, stderr)
	chart, classes := readSVG(t, out)
	if classes["bar"] != 3 || classes["cell"] != 0 {
		t.Fatalf("rects %+v", chart.Rects)
	}
	var variants []string
	for _, r := range chart.Rects {
		if r.Class == "bar" {
			variants = append(variants, r.Variant)
		}
	}
	if strings.Join(variants, ",") != "red,green,blue" {
		t.Errorf("bars for %v", variants)
	}

	out = filepath.Join(dir, "switch.svg")
	_, _, code = runCmd(t, "simulate", testdata("flags.json"), "banner-color", "--users", "3000", "--against-fractional", "v3", "--svg", out)
	if code != exitOK {
		t.Fatalf("status %d", code)
	}
	if _, classes = readSVG(t, out); classes["bar"] != 3 || classes["cell"] != 9 {
		t.Errorf("with --against: %v, want 3 bars and a 3×3 matrix", classes)
	}

	// Variant names are escaped.
	rep := &simReport{Flag: "f", Users: 2, Variants: []variantRow{{Variant: `<a&"b">`, Users: 2, Share: 1}}}
	var b bytes.Buffer
	if err := writeSVG(&b, rep); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "escaped.svg")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if chart, _ := readSVG(t, path); chart.Rects[1].Variant != `<a&"b">` {
		t.Errorf("escaped name read back as %q", chart.Rects[1].Variant)
	}
}

func TestSimulateInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := runContext(ctx, []string{"simulate", testdata("flags.json"), "banner-color"}, &out, &errOut)
	wantStatus(t, code, exitInterrupted, out.String(), errOut.String())
	wantOneLine(t, errOut.String(), "interrupted after 0 of 100000 users")
	if out.Len() != 0 {
		t.Errorf("stdout: %s", out.String())
	}
}

func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 1000)
	p.update(100)
	if b.Len() != 0 {
		t.Fatalf("progress within the first second: %q", b.String())
	}
	p.start = p.start.Add(-2 * time.Second)
	p.last = p.start
	p.update(250)
	p.finish()
	if got := b.String(); got != "\rsimulating:  25% (250 of 1,000 users)\n" {
		t.Errorf("progress %q", got)
	}
}

func TestSimulateBadInput(t *testing.T) {
	flags := testdata("flags.json")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{flags, "banner-color", "--users", "0"}, "--users must be at least 1, not 0"},
		{[]string{flags, "banner-color", "--users", "many"}, `invalid value "many" for flag --users`},
		{[]string{flags, "banner-color", "--key-template", "user"}, `--key-template must contain {i}, not "user"`},
		{[]string{flags, "nope"}, `flag "nope" is not defined in testdata/flags.json`},
		{[]string{flags, "banner-color", "--against", "missing.json"}, "--against missing.json: no such file or directory"},
		{[]string{flags, "banner-color", "--against", testdata("rollout-50-50.json")}, `flag "banner-color" is not defined in testdata/rollout-50-50.json`},
		{[]string{flags, "banner-color", "--against-fractional", "3"}, `--against-fractional must be v1, v2 or v3, not "3"`},
		{[]string{flags, "banner-color", "--format", "svg"}, `--format must be text, json, csv, not "svg"`},
		{[]string{flags, "banner-color", "--context", "[]"}, "--context is not a JSON object"},
		{[]string{flags, "banner-color", "--svg", filepath.Join(t.TempDir(), "no", "dir.svg")}, "--svg: open"},
		{[]string{flags}, "want FILE and FLAG"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCmd(t, append([]string{"simulate"}, tt.args...)...)
		wantStatus(t, code, exitBadInput, stdout, stderr)
		wantOneLine(t, stderr, tt.want)
	}
}
