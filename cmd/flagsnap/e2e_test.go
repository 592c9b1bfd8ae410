package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
)

// runBinary runs the built command.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// The first call builds the command: the bound is the run's alone.
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

func TestBinary(t *testing.T) {
	// Skips the whole test with -short, not only the runs: the chart
	// checked after them is written by the simulate run.
	binary(t)
	svg := filepath.Join(t.TempDir(), "chart.svg")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // each must appear in stdout
		stderr string   // the one line on stderr, if any
	}{
		{"validate valid", []string{"validate", testdata("flags.json")}, exitOK,
			[]string{"testdata/flags.json: valid: 4 flags, 0 warnings"}, ""},
		{"validate invalid", []string{"validate", testdata("bad.json")}, exitNegative,
			[]string{`testdata/bad.json:6:7: error: flag "new-checkout": /flags/new-checkout/defaultVariant: defaultVariant "of" is not one of the variants`}, ""},
		{"validate unreadable", []string{"validate", "missing.json"}, exitBadInput, nil,
			"flagsnap validate: missing.json: no such file or directory\n"},
		{"eval explain", []string{"eval", testdata("flags.json"), "banner-color", "--context", `{"targetingKey": "user-3"}`, "--explain"}, exitOK,
			[]string{"variant   blue\n", "fractional → \"blue\"\n", "bytes (UTF-8, 18): 62616e6e65722d636f6c6f72757365722d33\n", "→ \"blue\"   weight 20  [80, 100)"}, ""},
		{"eval unknown flag", []string{"eval", testdata("flags.json"), "nope"}, exitBadInput, nil,
			"flagsnap eval: flag \"nope\" is not defined in testdata/flags.json\n"},
		{"eval bad context", []string{"eval", testdata("flags.json"), "banner-color", "--context", "{"}, exitBadInput, nil,
			"flagsnap eval: --context is not a JSON object: unexpected EOF\n"},
		{"simulate", []string{"simulate", testdata("flags.json"), "banner-color", "--users", "5000", "--svg", svg}, exitOK,
			[]string{"banner-color in testdata/flags.json, 5,000 users, fractional v2", "chi-square"}, ""},
		{"help", []string{"simulate", "--help"}, exitOK, []string{"Example:\n  flagsnap simulate flags.json banner-color"}, ""},
		{"unknown command", []string{"lint"}, exitBadInput, nil,
			"flagsnap: unknown command \"lint\" (commands: validate, eval, simulate, serve, usage, version; see flagsnap --help)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, tt.args...)
			wantStatus(t, code, tt.code, stdout, stderr)
			for _, want := range tt.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", stderr, tt.stderr)
			}
		})
	}
	if _, classes := readSVG(t, svg); classes["bar"] != 3 {
		t.Errorf("SVG bars %v", classes)
	}
}

// flagsnap serve as a user runs it: a process that serves until
// interrupted, with a provider following it.
func TestBinaryServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, colorDoc("red"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), "serve", path, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	defer func() {
		_ = cmd.Process.Kill()
		for range lines {
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended: %s", errOut.String())
			}
			return l
		case <-time.After(wait):
			t.Fatal("no output from serve")
		}
		return ""
	}
	m := servingLine.FindStringSubmatch(next() + "\n")
	if m == nil {
		t.Fatal("no serving line")
	}
	r := &serveRun{addr: m[1]}
	p, err := flagsnap.NewProvider(flagsnap.WithResolver(flagsnap.ResolverInProcess), flagsnap.WithHost("127.0.0.1"), flagsnap.WithPort(r.port(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	if c := str(p, "color", nil); c != "red" {
		t.Fatalf("color %q", c)
	}
	// The follower is logged before the file changes.
	for _, want := range []string{`"stream opened"`, `"first flag set sent"`} {
		re := regexp.MustCompile(`^level=INFO msg=` + want + ` follower=127\.0\.0\.1:\d+ providerId="" selector=""`)
		if l := next(); !re.MatchString(l) {
			t.Errorf("line %q, want %s", l, re)
		}
	}
	writeFile(t, path, colorDoc("blue"))
	if ev := nextEvent(t, p, openfeature.ProviderConfigChange); len(ev.FlagChanges) != 1 || ev.FlagChanges[0] != "color" {
		t.Errorf("changes %v", ev.FlagChanges)
	}
	if l := next(); l != path+": sent 2 flags (1 stream open)" {
		t.Errorf("line %q", l)
	}
	p.Shutdown()

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if l := next(); l != "stopped" {
		t.Errorf("line %q, want stopped", l)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v: %s", err, errOut.String())
		}
	case <-time.After(wait):
		t.Fatal("serve did not stop on interrupt")
	}
}
