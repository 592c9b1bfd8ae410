package main

import (
	"context"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: the module version the binary records, as it records it,
// and the Go version; the same for --version.
func TestVersion(t *testing.T) {
	goVersion := runtime.Version()
	tests := []struct {
		name string
		info *debug.BuildInfo // nil: no build information
		want string
	}{
		{"built from a checkout", &debug.BuildInfo{Main: debug.Module{Path: "github.com/flagsnap/flagsnap/cmd/flagsnap", Version: "(devel)"}},
			"flagsnap (devel) " + goVersion + "\n"},
		{"installed at a release", &debug.BuildInfo{Main: debug.Module{Path: "github.com/flagsnap/flagsnap/cmd/flagsnap", Version: "v1.4.0"}},
			"flagsnap v1.4.0 " + goVersion + "\n"},
		{"stamped from a commit", &debug.BuildInfo{Main: debug.Module{Path: "github.com/flagsnap/flagsnap/cmd/flagsnap", Version: "v0.0.0-20261127192540-1689ba38abaf+dirty"}},
			"flagsnap v0.0.0-20261127192540-1689ba38abaf+dirty " + goVersion + "\n"},
		{"no module version", &debug.BuildInfo{}, "flagsnap (unknown) " + goVersion + "\n"},
		{"no build information", nil, "flagsnap (unknown) " + goVersion + "\n"},
	}
	defer func(orig func() (*debug.BuildInfo, bool)) { readBuildInfo = orig }(readBuildInfo)
	for _, tt := range tests {
		readBuildInfo = func() (*debug.BuildInfo, bool) { return tt.info, tt.info != nil }
		for _, arg := range []string{"version", "--version", "-version"} {
			t.Run(tt.name+"/"+arg, func(t *testing.T) {
				stdout, stderr, code := runCmd(t, arg)
				wantStatus(t, code, exitOK, stdout, stderr)
				if stdout != tt.want || stderr != "" {
					t.Errorf("stdout %q, stderr %q; want stdout %q", stdout, stderr, tt.want)
				}
			})
		}
	}
}

func TestVersionUsage(t *testing.T) {
	stdout, stderr, code := runCmd(t, "version", "--help")
	wantStatus(t, code, exitOK, stdout, stderr)
	if !strings.HasPrefix(stdout, "Usage: flagsnap version\n") || strings.Contains(stdout, "Options:") {
		t.Errorf("usage:\n%s", stdout)
	}
	stdout, stderr, code = runCmd(t, "--version", "extra")
	wantStatus(t, code, exitBadInput, stdout, stderr)
	if want := "flagsnap version: want no argument, got 1 argument(s) (see flagsnap version --help)\n"; stderr != want || stdout != "" {
		t.Errorf("stdout %q, stderr %q; want stderr %q", stdout, stderr, want)
	}
	stdout, _, _ = runCmd(t, "--help")
	if !strings.Contains(stdout, "\n  flagsnap version ") {
		t.Errorf("the commands' list lacks version:\n%s", stdout)
	}
}

// The built command prints what go version -m reads from the binary: the
// main module's version ("(devel)" from a checkout, unless Go stamped a
// pseudo-version) and the Go version.
func TestBinaryVersion(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	goVersion, modVersion := "", ""
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) == 2:
			goVersion = f[1]
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/flagsnap/flagsnap/cmd/flagsnap":
			modVersion = f[2]
		}
	}
	if goVersion == "" || modVersion == "" {
		t.Fatalf("go version -m says:\n%s", out)
	}
	want := "flagsnap " + modVersion + " " + goVersion + "\n"
	for _, arg := range []string{"version", "--version"} {
		stdout, stderr, code := runBinary(t, arg)
		wantStatus(t, code, exitOK, stdout, stderr)
		if stdout != want || stderr != "" {
			t.Errorf("%s: stdout %q, stderr %q; want stdout %q", arg, stdout, stderr, want)
		}
	}
}
