package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flagsnap/flagsnap/evaluator"
)

// billionLaughs is a YAML document whose aliases, nine of the one before on
// each of nine levels, expand to hundreds of millions of values.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, name := range strings.Split("bcdefghi", "") {
		fmt.Fprintf(&b, "%s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = name
	}
	b.WriteString("flags: *i\n")
	return b.String()
}

// flagWithRule is a document of one valid flag whose rule is given.
func flagWithRule(rule string) string {
	return `{"flags": {"f": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": ` + rule + `}}}`
}

// TestValidateHostileFiles runs validate on documents made to exhaust a
// reader, in a process of its own: each must be reported in seconds and
// within a few hundred megabytes, as the provider reads them. The first
// two the provider refuses; the others it loads, and so must validate.
func TestValidateHostileFiles(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	// A rule as deep as the loader reads: the document, "flags", the flag
	// and "targeting" are the first four levels.
	deepest := maxDepth - 4
	var manyRules strings.Builder
	manyRules.WriteString("rule: &rule {\"if\": [{\"==\": [{\"var\": \"k\"}, 1]}, \"a\", {\"in\": [{\"var\": \"e\"}, [\"x\", \"y\"]]}, \"a\", \"b\"]}\nflags:\n")
	for i := range 3000 {
		fmt.Fprintf(&manyRules, "  f%d: {state: ENABLED, variants: {a: a, b: b}, defaultVariant: a, targeting: *rule}\n", i)
	}
	tests := []struct {
		name, file, doc string
		code            int
		want            []string // lines of stdout
	}{
		{"200,000 nested arrays", "deep.json", strings.Repeat("[", 200000) + strings.Repeat("]", 200000), exitNegative,
			[]string{
				"deep.json:1:10001: error: invalid JSON at line 1, column 10001: invalid character '[' exceeded max depth",
				"    fix: nest values at most 10000 levels deep: neither flagsnap nor flagd reads deeper",
			}},
		{"a billion laughs", "laughs.yaml", billionLaughs(), exitNegative,
			[]string{
				"laughs.yaml: error: invalid YAML: yaml: document contains excessive aliasing",
				"    fix: use fewer aliases: expanded, they turn the 30 values written into 926,177,116, and the YAML decoder refuses a document made mostly of expanded aliases",
			}},
		{"a rule of arrays as deep as the loader reads", "arrays.json",
			flagWithRule(strings.Repeat("[", deepest) + strings.Repeat("]", deepest)), exitOK,
			[]string{
				`arrays.json:1:85: warning: flag "f": schema: /flags/f/targeting: not checked: the rule nests more than 64 levels deep, further than this check follows`,
				"arrays.json: valid: 1 flag, 1 warning",
			}},
		{"ifs as deep as the loader reads", "ifs.json",
			flagWithRule(strings.Repeat(`{"if": [`, deepest/2) + `"a"` + strings.Repeat("]}", deepest/2)), exitOK,
			[]string{"ifs.json: valid: 1 flag, 1 warning"}},
		{"one anchored rule in 3,000 flags", "anchors.yaml", manyRules.String(), exitOK,
			[]string{"anchors.yaml: valid: 3000 flags, 0 warnings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, []byte(tt.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			stdout, stderr, code, maxRSS := runBounded(t, bin, dir, "validate", tt.file)
			elapsed := time.Since(start)
			t.Logf("%s (%d bytes): %v, %d MB at most", tt.file, len(tt.doc), elapsed.Round(time.Millisecond), maxRSS>>20)
			if code != tt.code {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if elapsed > 10*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if maxRSS > 512<<20 {
				t.Errorf("used %d MB", maxRSS>>20)
			}
			lines := strings.Split(stdout, "\n")
			for _, want := range tt.want {
				if !contains(lines, want) {
					t.Errorf("no line\n%s\nin\n%s", want, stdout)
				}
			}
		})
	}
}

// runBounded runs the command in dir, killed past a minute or, on Linux,
// past 4 GB of address space: a regression fails the test rather than
// the machine it runs on. maxRSS is the process's peak resident memory,
// where the system says.
func runBounded(t *testing.T, bin, dir string, args ...string) (stdout, stderr string, code int, maxRSS int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if runtime.GOOS == "linux" {
		cmd = exec.CommandContext(ctx, "sh", append([]string{"-c", `ulimit -v 4000000 && exec "$0" "$@"`, bin}, args...)...)
	}
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxRSS = int64(ru.Maxrss) << 10 // kilobytes on Linux
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode(), maxRSS
}

// TestMaxDepthIsTheLoaders holds validate's nesting limit to the loader's:
// what the loader reads, the source map reads to the bottom, and no more.
func TestMaxDepthIsTheLoaders(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		// The document, "flags" and the flag, then an "if" and its
		// arguments for every two levels, then an operator.
		pairs, odd := (depth-4)/2, (depth-4)%2
		inner := `{"nope": 1}`
		if odd == 1 {
			inner = "[" + inner + "]"
		}
		doc := []byte(flagWithRule(strings.Repeat(`{"if": [`, pairs) + inner + strings.Repeat("]}", pairs)))
		set, err := evaluator.Load(doc)
		if depth > maxDepth {
			var se *evaluator.SyntaxError
			if !errors.As(err, &se) || !nestsDeeper(doc, maxDepth) {
				t.Errorf("%d levels: %v, want a syntax error that nestsDeeper explains", depth, err)
			}
			continue
		}
		if err != nil || nestsDeeper(doc, maxDepth) {
			t.Fatalf("%d levels: %v", depth, err)
		}
		problems := set.Problems()
		if len(problems) != 1 {
			t.Fatalf("problems %v", problems)
		}
		want := pos{1, bytes.Index(doc, []byte(`"nope"`)) + 1}
		if got := newSourceMap(doc).find(problems[0].Pointer()); got != want {
			t.Errorf("the deepest operator at %+v, want %+v", got, want)
		}
	}
}
