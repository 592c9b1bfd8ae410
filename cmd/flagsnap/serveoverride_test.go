package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/syncserver"
)

// overrideColor is an override of colorDoc's color, whose default variant
// is def.
func overrideColor(def string) string {
	return `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue", "green": "green"}, "defaultVariant": "` + def + `"}}}`
}

// ofrepColor is what OFREP answers for color with an empty context.
func ofrepColor(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	_, body := ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags/color", map[string]any{})
	var color string
	if err := json.Unmarshal(decode[ofrepFlag](t, body).Value, &color); err != nil {
		t.Fatalf("color: %s: %v", body, err)
	}
	return color
}

// Everything serve serves carries the override's flags over the file's,
// and follows the override file: rewritten, broken, deleted, back.
func TestServeOverride(t *testing.T) {
	dir := t.TempDir()
	path, over := filepath.Join(dir, "flags.json"), filepath.Join(dir, "override.json")
	writeFile(t, path, colorDoc("red"))
	writeFile(t, over, overrideColor("blue"))
	r := startServe(t, path, "--addr", "127.0.0.1:0", "--http", "127.0.0.1:0", "--override", over)
	p := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))
	c, base := httpClient(t), r.ofrepBase(t)

	// check waits until OFREP, whose provider follows the server, answers
	// color, then checks the sync follower and /flags.json.
	check := func(step, color string) {
		t.Helper()
		waitFor(t, step+": OFREP's color "+color, func() bool { return ofrepColor(t, c, base) == color })
		if got := str(p, "color", nil); got != color {
			t.Errorf("%s: color %q, want %q", step, got, color)
		}
		if got := str(p, "region", map[string]any{"region": "eu"}); got != "eu" {
			t.Errorf("%s: region %q: the file's other flag is lost", step, got)
		}
		_, body := httpGet(t, c, http.MethodGet, r.httpURL(t))
		if want := `"defaultVariant":"` + color + `"`; !strings.Contains(string(body), want) {
			t.Errorf("%s: /flags.json does not say %s: %s", step, want, body)
		}
	}
	check("at the start", "blue")

	writeFile(t, over, overrideColor("green"))
	if ev := nextEvent(t, p, openfeature.ProviderConfigChange); !slices.Equal(ev.FlagChanges, []string{"color"}) {
		t.Errorf("changed flags %v, want [color]", ev.FlagChanges)
	}
	check("the override rewritten", "green")

	// A broken override is refused whole and logged; its last good flags
	// stay.
	writeFile(t, over, `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "nope"}}}`)
	// The line names the override once: its error does not name it again.
	refusal := `level=ERROR msg="override refused; its last good flags stay" override=` + over + ` error="`
	waitFor(t, "the refusal logged", func() bool { return strings.Contains(r.stdout.String(), refusal) })
	line, _, _ := strings.Cut(r.stdout.String()[strings.Index(r.stdout.String(), refusal):], "\n")
	if !strings.Contains(line, `defaultVariant \"nope\"`) || strings.Count(line, over) != 1 {
		t.Errorf("the refusal does not say why, or names the override more than once: %s", line)
	}
	noEvent(t, p, 200*time.Millisecond)
	check("the override broken", "green")

	if err := os.Remove(over); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, p, openfeature.ProviderConfigChange)
	check("the override deleted", "red")

	writeFile(t, over, overrideColor("blue"))
	nextEvent(t, p, openfeature.ProviderConfigChange)
	check("the override back", "blue")

	// A change of the file keeps the override over it.
	writeFile(t, path, strings.Replace(colorDoc("red"), `"other": "other"`, `"other": "elsewhere"`, 1))
	nextEvent(t, p, openfeature.ProviderConfigChange)
	if got := str(p, "region", map[string]any{"region": "us"}); got != "elsewhere" {
		t.Errorf("region %q after the file's change", got)
	}
	check("the file changed", "blue")
}

// An override file that does not exist when serve starts is no overrides,
// logged once, until it appears.
func TestServeOverrideAppears(t *testing.T) {
	dir := t.TempDir()
	path, over := filepath.Join(dir, "flags.json"), filepath.Join(dir, "override.json")
	writeFile(t, path, colorDoc("red"))
	r := startServe(t, path, "--addr", "127.0.0.1:0", "--override", over)
	p := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))
	if got := str(p, "color", nil); got != "red" {
		t.Fatalf("color %q without the override, want red", got)
	}
	writeFile(t, over, overrideColor("green"))
	nextEvent(t, p, openfeature.ProviderConfigChange)
	if got := str(p, "color", nil); got != "green" {
		t.Errorf("color %q once the override appeared, want green", got)
	}
	absent := `level=INFO msg="override file absent: serving without it until it exists" override=` + over + "\n"
	if n := strings.Count(r.stdout.String(), absent); n != 1 {
		t.Errorf("the absence logged %d times, want once:\n%s", n, r.stdout)
	}
}

// A follower of serve evaluates every flag, for every context, as
// evaluator.Layered of the file and the overrides loaded one by one does.
// An override's flag carries the file's flag-set metadata under its own.
func TestServeOverrideEvaluatesAsLayered(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flags.json")
	writeFile(t, path, overlayBase)
	docs := []string{overlayFirst, overlaySecond}
	base, err := evaluator.Load([]byte(overlayBase))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{path, "--addr", "127.0.0.1:0"}
	layers := []evaluator.Layer{{Name: path, Set: base}}
	for i, doc := range docs {
		over := filepath.Join(dir, "override"+string(rune('1'+i))+".json")
		writeFile(t, over, doc)
		set, err := evaluator.Load([]byte(doc), evaluator.WithStrict())
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, evaluator.Layer{Name: over, Set: set})
		args = append(args, "--override", over)
	}
	layered := evaluator.Layered(layers...)
	r := startServe(t, args...)
	p := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))

	overridden := layered.Overridden()
	for _, ctx := range []map[string]any{
		{},
		{"targetingKey": "user-1", "email": "ada@example.com"},
		{"targetingKey": "user-2", "email": "bob@example.com", "tier": "gold"},
		{"targetingKey": "user-3", "tier": "silver"},
	} {
		all, err := p.EvaluateAll(context.Background(), ctx)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, got := range all.Flags {
			keys = append(keys, got.Key)
			want := resolveAny(layered, got.Key, ctx)
			if _, over := overridden[got.Key]; over {
				want.Metadata = underMetadata(base.Metadata(), want.Metadata)
			}
			if got.Variant != want.Variant || string(got.Reason) != want.Reason || string(got.ErrorCode) != want.Error ||
				!sameValue(t, got.Value, want.Value) || !sameValue(t, map[string]any(got.FlagMetadata), want.Metadata) {
				t.Errorf("%s for %v:\n got  %v %q %s %s %v\n want %v %q %s %s %v", got.Key, ctx,
					got.Value, got.Variant, got.Reason, got.ErrorCode, got.FlagMetadata,
					want.Value, want.Variant, want.Reason, want.Error, want.Metadata)
			}
		}
		if !slices.Equal(keys, layered.Keys()) {
			t.Errorf("flags %v, want %v", keys, layered.Keys())
		}
	}
}

// An override that cannot be used stops serve before it serves, as a
// FILE that cannot does.
func TestServeOverrideBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "flags.json")
	writeFile(t, good, colorDoc("red"))
	crossRef := filepath.Join(dir, "cross-ref.json")
	writeFile(t, crossRef, `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "red",
  "targeting": {"if": [{"$ref": "eu"}, "red"]}}}}`)
	broken := filepath.Join(dir, "broken.json")
	writeFile(t, broken, `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red"}, "defaultVariant": "nope"}}}`)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{good, "--override", crossRef}, []string{"override " + crossRef + " refused", `$ref "eu" names no entry of $evaluators`, refHint}},
		{[]string{good, "--override", broken}, []string{"override " + broken + " refused", `defaultVariant "nope"`}},
		{[]string{good, "--override", "https://example.com/override.json"}, []string{"--override https://example.com/override.json: an override is a file, not a URL"}},
		{[]string{good, "--override", dir}, []string{"override " + dir + ": is a directory"}},
	}
	for _, tt := range tests {
		serveRefused(t, append([]string{"--addr", "127.0.0.1:0"}, tt.args...), tt.want...)
	}
}

// teamFiles writes flags.json (color red) in a new directory, and beside
// it a directory teams/ of a.json (banner) and b.json (pager, of flag set
// ops), to serve with --selector-dir.
func teamFiles(t *testing.T) (dir, path, teams string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "flags.json")
	writeFile(t, path, colorDoc("red"))
	teams = filepath.Join(dir, "teams")
	if err := os.Mkdir(teams, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(teams, "a.json"), `{"flags": {"banner": {"state": "ENABLED", "variants": {"big": "big"}, "defaultVariant": "big"}}}`)
	writeFile(t, filepath.Join(teams, "b.json"), `{"metadata": {"flagSetId": "ops"}, "flags": {"pager": {"state": "ENABLED", "variants": {"on": "on"}, "defaultVariant": "on"}}}`)
	return dir, path, teams
}

// With several files, an override's flag replaces the flag in each file
// that defines it, and a flag no file defines goes into every file, so
// that each flag set has it. A file is not made a source of a flag only
// another file defines: in flagd's store, the later of two files with the
// same flag would take it from the earlier one's selection.
func TestServeOverrideSelectorDir(t *testing.T) {
	dir, path, teams := teamFiles(t)
	over := filepath.Join(dir, "override.json")
	writeFile(t, over, `{"flags": {
  "color": {"state": "ENABLED", "variants": {"blue": "blue"}, "defaultVariant": "blue"},
  "maintenance": {"state": "ENABLED", "variants": {"on": "on"}, "defaultVariant": "on"}}}`)
	r := startServe(t, path, "--addr", "127.0.0.1:0", "--selector-dir", teams, "--override", over)
	if want := ", overrides: " + over + "\n"; !strings.Contains(r.stdout.String(), want) {
		t.Errorf("start line does not say %q: %s", want, r.stdout)
	}
	port := flagsnap.WithPort(r.port(t))
	tests := []struct {
		selector                   string
		color, maintenance, banner string
	}{
		{"", "blue", "on", "big"},
		{"source=" + path, "blue", "none", "none"},
		{"a.json", "none", "on", "big"},
		{"flagSetId=ops", "none", "on", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			p := connect(t, flagsnap.WithHost("127.0.0.1"), port, flagsnap.WithSelector(tt.selector))
			for flag, want := range map[string]string{"color": tt.color, "maintenance": tt.maintenance, "banner": tt.banner} {
				if got := str(p, flag, nil); got != want {
					t.Errorf("%s %q, want %q", flag, got, want)
				}
			}
		})
	}
}

// An override change that goes into several served files reaches a
// follower as one change: it never sees some of the files changed and not
// the others.
func TestServeOverrideOneChangeForEveryFile(t *testing.T) {
	dir, path, teams := teamFiles(t)
	over := filepath.Join(dir, "override.json")
	r := startServe(t, path, "--addr", "127.0.0.1:0", "--selector-dir", teams, "--override", over)
	p := connect(t, flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))

	// color is flags.json's and banner a.json's: the override goes into
	// both files.
	writeFile(t, over, `{"flags": {
  "color": {"state": "ENABLED", "variants": {"blue": "blue"}, "defaultVariant": "blue"},
  "banner": {"state": "ENABLED", "variants": {"small": "small"}, "defaultVariant": "small"}}}`)
	ev := nextEvent(t, p, openfeature.ProviderConfigChange)
	if changed := slices.Sorted(slices.Values(ev.FlagChanges)); !slices.Equal(changed, []string{"banner", "color"}) {
		t.Errorf("changed flags %v, want [banner color] at once", ev.FlagChanges)
	}
	noEvent(t, p, 500*time.Millisecond)
	if color, banner := str(p, "color", nil), str(p, "banner", nil); color != "blue" || banner != "small" {
		t.Errorf("color %q, banner %q; want blue and small", color, banner)
	}
}

// The change of an override that goes into two served files is one
// change of the server, whatever the streams' scheduling: the test above
// could also pass with one change a file, its messages merged on the way.
func TestSetOverrideOneChangeForEveryFile(t *testing.T) {
	banner := `{"flags": {"banner": {"state": "ENABLED", "variants": {"big": "big"}, "defaultVariant": "big"}}}`
	files := []servedFile{{path: "flags.json", doc: []byte(colorDoc("red"))}, {path: "a.json", doc: []byte(banner)}}
	for i := range files {
		var err error
		if files[i].set, err = evaluator.Load(files[i].doc); err != nil {
			t.Fatal(err)
		}
	}
	over := filepath.Join(t.TempDir(), "override.json")
	var out bytes.Buffer
	lay, err := newLayering(files, []string{over}, &out, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var opts []syncserver.Option
	for _, f := range lay.files {
		opts = append(opts, syncserver.WithSource(f.path, f.sent))
	}
	srv, err := syncserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	lay.srv = srv

	o, err := readyOverride(over, []byte(`{"flags": {
  "color": {"state": "ENABLED", "variants": {"blue": "blue"}, "defaultVariant": "blue"},
  "banner": {"state": "ENABLED", "variants": {"small": "small"}, "defaultVariant": "small"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := srv.Version()
	lay.setOverride(0, o)
	if got := srv.Version(); got != v+1 {
		t.Errorf("version %d after the override's change from %d, want one change\n%s", got, v, out.String())
	}
	for source, want := range map[string]string{"flags.json": "blue", "a.json": "small"} {
		doc, _, err := srv.Document("source=" + source)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc, `"defaultVariant":"`+want+`"`) {
			t.Errorf("%s serves %s, want its flag's defaultVariant %s", source, doc, want)
		}
	}
	// An override's flag of a key the file defines replaces one: the
	// counts are the files' own.
	if want := "flags.json: sent 2 flags (0 streams open)\na.json: sent 1 flag (0 streams open)\n"; out.String() != want {
		t.Errorf("serve said:\n%s\nwant:\n%s", out.String(), want)
	}

	// A key no file defines goes into both, and counts in both.
	o, err = readyOverride(over, []byte(`{"flags": {
  "maintenance": {"state": "ENABLED", "variants": {"on": "on"}, "defaultVariant": "on"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	lay.setOverride(0, o)
	if want := "flags.json: sent 3 flags (0 streams open)\na.json: sent 2 flags (0 streams open)\n"; out.String() != want {
		t.Errorf("serve said:\n%s\nwant:\n%s", out.String(), want)
	}
}
