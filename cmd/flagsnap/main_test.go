package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/internal/leaktest"
)

// binDir holds the command built once for the end-to-end tests.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flagsnap-bin-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := 0
	func() {
		defer os.RemoveAll(dir)
		code = leaktest.Run(m)
	}()
	os.Exit(code)
}

// wait bounds every blocking step of a test.
const wait = 10 * time.Second

// runCmd runs the command in process and returns its output and status.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// wantStatus checks the exit status, printing the output when it differs.
func wantStatus(t *testing.T, code, want int, stdout, stderr string) {
	t.Helper()
	if code != want {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
}

// wantOneLine checks that stderr is one line holding every part of want.
func wantOneLine(t *testing.T, stderr string, want ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not one line: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
}

func testdata(name string) string { return filepath.Join("testdata", name) }

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds the command once per test run.
func binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	buildOnce.Do(func() {
		binPath = filepath.Join(binDir, "flagsnap")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// waitFor polls until cond holds, failing the test after wait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
