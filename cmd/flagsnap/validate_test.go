package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flagsnap/flagsnap/evaluator"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		code  int
		lines []string // each must be a line of stdout
	}{
		{
			name:  "valid",
			args:  []string{testdata("flags.json")},
			lines: []string{"testdata/flags.json: valid: 4 flags, 0 warnings"},
		},
		{
			name: "every problem of every flag, where it is written, with a fix",
			args: []string{testdata("bad.json")},
			code: exitNegative,
			lines: []string{
				`testdata/bad.json:6:7: error: flag "new-checkout": /flags/new-checkout/defaultVariant: defaultVariant "of" is not one of the variants`,
				`    fix: use one of the variants: "off", "on"`,
				`testdata/bad.json:10:20: error: flag "color": /flags/color/variants/red: variants mix types: "one" is a number, "red" is a string`,
				`    fix: give every variant the same type (now 1 number, 1 string)`,
				`testdata/bad.json:10:20: warning: flag "color": schema: /flags/color/variants/red: got string, want number`,
				`testdata/bad.json:16:7: error: flag "split": /flags/split/defaultVariant: defaultVariant "c" is not one of the variants`,
				`testdata/bad.json:17:21: error: flag "split": /flags/split/targeting/fractional: invalid weights: bucket 0: fractional: weight is not a whole number: 50.5`,
				`    fix: use whole numbers in the same proportions: 101, 100 (×2)`,
				`testdata/bad.json:23:28: warning: flag "ops": schema: /flags/ops/targeting/if/0: additional properties 'startswith' not allowed`,
				`testdata/bad.json:23:29: error: flag "ops": /flags/ops/targeting/if/0/startswith: unknown operator "startswith"`,
				`    fix: did you mean "starts_with"?`,
				`testdata/bad.json:29:29: error: flag "refs": /flags/refs/targeting/if/0/$ref: $ref "nope" names no entry of $evaluators`,
				`    fix: add "nope" to "$evaluators"`,
				`testdata/bad.json: invalid: 6 errors, 2 warnings`,
			},
		},
		{
			name: "YAML",
			args: []string{testdata("bad.yaml")},
			code: exitNegative,
			lines: []string{
				`testdata/bad.yaml:7:5: error: flag "new-checkout": /flags/new-checkout/defaultVariant: defaultVariant "of" is not one of the variants`,
				`testdata/bad.yaml:16:11: error: flag "ops": /flags/ops/targeting/if/0/startswith: unknown operator "startswith"`,
				`testdata/bad.yaml: invalid: 2 errors, 1 warning`,
			},
		},
		{
			name: "flags as an array",
			args: []string{testdata("array.json")},
			code: exitNegative,
			lines: []string{
				`testdata/array.json:4:69: error: flag "broken": /flags/1/defaultVariant: defaultVariant "off" is not one of the variants`,
				`testdata/array.json:5:5: error: flag "flags[2]": /flags/2: flag entry has no "key"`,
				`    fix: give the entry a "key", the flag's name`,
			},
		},
		{
			name: "a schema warning about what flagd evaluates all the same says so, and only then",
			args: []string{testdata("computed.json")},
			code: exitNegative,
			lines: []string{
				`testdata/computed.json:9:19: warning: flag "ramp": schema: /flags/ramp/targeting/fractional/0/1: got object, want number (flagd evaluates this all the same)`,
				`testdata/computed.json:10:19: warning: flag "ramp": schema: /flags/ramp/targeting/fractional/1/1: got object, want number (flagd evaluates this all the same)`,
				`testdata/computed.json:20:19: warning: flag "typo": schema: /flags/typo/targeting/fractional/0/1: got object, want number`,
				`testdata/computed.json:20:20: error: flag "typo": /flags/typo/targeting/fractional/0/1/minus: unknown operator "minus"`,
				`testdata/computed.json: invalid: 1 error, 3 warnings`,
			},
		},
		{
			name: "syntax error",
			args: []string{testdata("syntax.json")},
			code: exitNegative,
			lines: []string{
				`testdata/syntax.json:5:45: error: invalid JSON at line 5, column 45: expected , or } after the value: add a comma`,
				`testdata/syntax.json: invalid: 1 error, 0 warnings`,
			},
		},
		{
			name: "warnings only",
			args: []string{testdata("warnings.json")},
			lines: []string{
				`testdata/warnings.json:4:7: warning: flag "retired": /flags/retired/state: state should be "ENABLED" or "DISABLED", not ON; treated as ENABLED`,
				`    fix: set "state" to "ENABLED" or "DISABLED"`,
				`testdata/warnings.json:4:7: warning: flag "retired": schema: /flags/retired/state: value must be one of 'ENABLED', 'DISABLED'`,
				`testdata/warnings.json:7:7: warning: flag "retired": /flags/retired/metadata: metadata "tags" is an array; only strings, numbers and booleans are kept`,
				`testdata/warnings.json:10:19: warning: /$evaluators/nobody: flagd refuses the whole document over this evaluator, empty or under three characters long ("evaluator object is empty"); flagsnap substitutes its value`,
				`testdata/warnings.json: valid: 1 flag, 5 warnings`,
			},
		},
		{
			name:  "strict makes warnings errors",
			args:  []string{"--strict", testdata("warnings.json")},
			code:  exitNegative,
			lines: []string{`testdata/warnings.json: invalid: 5 errors, 0 warnings`},
		},
		{
			name: "several files: the worst status",
			args: []string{testdata("flags.json"), testdata("bad.yaml")},
			code: exitNegative,
			lines: []string{
				"testdata/flags.json: valid: 4 flags, 0 warnings",
				"testdata/bad.yaml: invalid: 2 errors, 1 warning",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, append([]string{"validate"}, tt.args...)...)
			wantStatus(t, code, tt.code, stdout, stderr)
			if stderr != "" {
				t.Errorf("stderr: %s", stderr)
			}
			got := strings.Split(stdout, "\n")
			for _, want := range tt.lines {
				if !contains(got, want) {
					t.Errorf("no line\n%s\nin\n%s", want, stdout)
				}
			}
		})
	}
}

func contains(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func TestValidateUnreadable(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runCmd(t, "validate", testdata("flags.json"), filepath.Join(dir, "missing.json"))
	wantStatus(t, code, exitBadInput, stdout, stderr)
	wantOneLine(t, stderr, "missing.json", "no such file or directory")
	if !strings.Contains(stdout, "testdata/flags.json: valid") {
		t.Errorf("the readable file is not reported: %s", stdout)
	}
	stdout, stderr, code = runCmd(t, "validate", dir)
	wantStatus(t, code, exitBadInput, stdout, stderr)
	wantOneLine(t, stderr, "is a directory")
}

func TestValidateJSON(t *testing.T) {
	stdout, stderr, code := runCmd(t, "validate", "--format", "json", testdata("bad.yaml"), testdata("flags.json"))
	wantStatus(t, code, exitNegative, stdout, stderr)
	var got struct {
		Valid bool
		Files []fileReport
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if got.Valid || len(got.Files) != 2 {
		t.Fatalf("valid %v, %d files", got.Valid, len(got.Files))
	}
	bad := got.Files[0]
	if bad.Valid || !bad.Readable || bad.Errors != 2 || bad.Warnings != 1 || len(bad.Problems) != 3 {
		t.Errorf("bad.yaml: %+v", bad)
	}
	want := problem{Severity: "error", Line: 7, Column: 5, Flag: "new-checkout", Path: "/flags/new-checkout/defaultVariant",
		Message: `defaultVariant "of" is not one of the variants`, Fix: `use one of the variants: "off", "on"`, Source: "flagsnap"}
	if bad.Problems[0] != want {
		t.Errorf("first problem %+v, want %+v", bad.Problems[0], want)
	}
	if good := got.Files[1]; !good.Valid || good.Flags != 4 || len(good.Problems) != 0 {
		t.Errorf("flags.json: %+v", good)
	}
}

func TestValidateDocumentErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		doc, want string
	}{
		{`{"flag": {}}`, `:1:1: error: not a flag set: "flags" is missing`},
		{"{\n  \"flags\": 3\n}", `:2:3: error: /flags: not a flag set: "flags" is a number, not an object or an array`},
		{"", `: error: not a flag set: the document is empty`},
		{"flags:\n  a: [1\n", `:1: error: invalid YAML`},
	}
	for i, tt := range tests {
		path := filepath.Join(dir, "doc"+string(rune('a'+i))+".json")
		if err := os.WriteFile(path, []byte(tt.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runCmd(t, "validate", path)
		wantStatus(t, code, exitNegative, stdout, stderr)
		if !strings.Contains(stdout, path+tt.want) {
			t.Errorf("%q: output\n%s\nwant %s%s", tt.doc, stdout, path, tt.want)
		}
	}
}

// TestValidateSyntaxErrors: a file that is not JSON is one error, where
// the fault is. A missing comma is reported where the comma goes, after
// the value before it, whatever that value is and however lines end.
func TestValidateSyntaxErrors(t *testing.T) {
	// flag is a flag file whose new-checkout flag has the members given,
	// one a line, each line ending with eol.
	flag := func(eol string, members ...string) string {
		lines := append([]string{"{", `  "flags": {`, `    "new-checkout": {`}, members...)
		lines = append(lines, "    }", "  }", "}", "")
		return strings.Join(lines, eol)
	}
	const (
		state    = `      "state": "ENABLED",`
		variants = `      "variants": {"on": true, "off": false},`
		def      = `      "defaultVariant": "off"`
	)
	const (
		object = "invalid JSON at line %d, column %d: expected , or } after the value: add a comma"
		array  = "invalid JSON at line %d, column %d: expected , or ] after the value: add a comma"
	)
	tests := []struct {
		name, doc    string
		line, column int
		msg          string // with the line and column
	}{
		{"after a string", flag("\n", `      "state": "ENABLED"`, variants, def), 4, 25, object},
		{"after a string, CRLF", flag("\r\n", `      "state": "ENABLED"`, variants, def), 4, 25, object},
		{"after an object", flag("\n", state, `      "variants": {"on": true, "off": false}`, def), 5, 45, object},
		{"after an object, CRLF", flag("\r\n", state, `      "variants": {"on": true, "off": false}`, def), 5, 45, object},
		{"after an array, CRLF", flag("\r\n", state, variants, def+",", `      "metadata": {"tags": ["a", "b"]`, `        "owner": "shop"}`), 7, 38, object},
		{"after a number, on one line", `{"flags": {"a": 1 "b": 2}}`, 1, 18, object},
		{"in a rule's array, after an object, CRLF", flag("\r\n", state, variants, def+",",
			`      "targeting": {"if": [{"==": [{"var": "plan"}, "pro"]}`, `        "on", "off"]}`), 7, 60, array},
		{"between flags", "{\n  \"flags\": {\n    \"a\": {\"state\": \"ENABLED\", \"variants\": {\"on\": true}, \"defaultVariant\": \"on\"}\n" +
			"    \"b\": {\"state\": \"ENABLED\", \"variants\": {\"on\": true}, \"defaultVariant\": \"on\"}\n  }\n}\n", 3, 80, object},
		{"between flags in an array, CRLF", "{\r\n  \"flags\": [\r\n    {\"key\": \"a\", \"variants\": {\"on\": true}, \"defaultVariant\": \"on\"}\r\n" +
			"    {\"key\": \"b\", \"variants\": {\"on\": true}, \"defaultVariant\": \"on\"}\r\n  ]\r\n}\r\n", 3, 67, array},

		// Other faults keep their message, at the byte that is wrong.
		{"trailing comma", `{"flags": {"a": {},}}`, 1, 20, "invalid JSON at line %d, column %d: invalid character '}' looking for beginning of object key string"},
		{"unquoted key, CRLF", "{\r\n  \"flags\": {}\r\n  metadata: {}\r\n}\r\n", 3, 3, "invalid JSON at line %d, column %d: invalid character 'm' after object key:value pair"},
		{"missing colon", "{\n  \"flags\" {}\n}\n", 2, 11, "invalid JSON at line %d, column %d: invalid character '{' after object key"},
		{"truncated", `{"flags": {`, 1, 11, "invalid JSON at line %d, column %d: unexpected end of document"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("flags%d.json", i))
			if err := os.WriteFile(path, []byte(tt.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			msg := fmt.Sprintf(tt.msg, tt.line, tt.column)
			stdout, stderr, code := runCmd(t, "validate", path)
			wantStatus(t, code, exitNegative, stdout, stderr)
			want := fmt.Sprintf("%s:%d:%d: error: %s\n%s: invalid: 1 error, 0 warnings\n", path, tt.line, tt.column, msg, path)
			if stdout != want || stderr != "" {
				t.Errorf("stdout:\n%s\nwant:\n%s\nstderr: %s", stdout, want, stderr)
			}

			stdout, stderr, code = runCmd(t, "validate", "--format", "json", path)
			wantStatus(t, code, exitNegative, stdout, stderr)
			var got struct{ Files []fileReport }
			if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got.Files) != 1 || len(got.Files[0].Problems) != 1 {
				t.Fatalf("JSON report (%v):\n%s", err, stdout)
			}
			wantProblem := problem{Severity: "error", Line: tt.line, Column: tt.column, Message: msg, Source: "flagsnap"}
			if p := got.Files[0].Problems[0]; p != wantProblem {
				t.Errorf("JSON problem %+v, want %+v", p, wantProblem)
			}
		})
	}
}

func TestValidateBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"validate"}, "no file given"},
		{[]string{"validate", "--format", "xml", testdata("flags.json")}, `--format must be text, json, not "xml"`},
		{[]string{"validate", "--strikt", testdata("flags.json")}, "unknown option --strikt; did you mean --strict? (see flagsnap validate --help)"},
		{[]string{"validate", "--zzz", testdata("flags.json")}, "unknown option --zzz (see flagsnap validate --help)"},
		{[]string{"validate", testdata("flags.json"), "--format"}, "flag needs an argument: --format (see flagsnap validate --help)"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCmd(t, tt.args...)
		wantStatus(t, code, exitBadInput, stdout, stderr)
		wantOneLine(t, stderr, tt.want)
	}
}

func TestSourceMapFallsBackToTheNearestWrittenParent(t *testing.T) {
	src := newSourceMap([]byte("{\n  \"flags\": {\n    \"a\": {\"targeting\": {\"$ref\": \"x\"}}\n  }\n}"))
	if got := src.find("/flags/a/targeting/if/0/in"); got != (pos{3, 11}) {
		t.Errorf("inside a substituted $ref: %+v, want the targeting key at 3:11", got)
	}
	if got := src.find("no-slash"); got != (pos{}) {
		t.Errorf("not a pointer: %+v", got)
	}
	if got := src.flagOf("/flags/a/targeting"); got != "a" {
		t.Errorf("flag %q, want a", got)
	}
}

// TestProblemPositionsComeFromPaths holds validate's positions for problems
// whose messages would mislead a reader of text (a key with '.', '/' or
// quotes) and shows that rewording every message moves none of them.
func TestProblemPositionsComeFromPaths(t *testing.T) {
	file := testdata("paths.json")
	want := map[string]pos{
		"default":         {9, 7},   // its defaultVariant
		"mixed":           {13, 34}, // the variant "c", a string after a number
		"dotted-operator": {18, 29}, // the operator "a.b[0]"
		"team/a~b":        {23, 7},  // its defaultVariant
		"bucket":          {28, 65}, // the bucket "b"
		"via-ref":         {33, 28}, // the $ref whose rule has the problem
		"no-variants":     {35, 5},  // the flag, which lacks "variants"
		"not-an-object":   {38, 5},
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	set, err := evaluator.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	src := newSourceMap(data)
	problems := set.Problems()
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d: %v", len(problems), len(want), problems)
	}
	for _, fp := range problems {
		w, ok := want[fp.Flag]
		if !ok {
			t.Errorf("unexpected problem %v", fp)
			continue
		}
		if got := flagProblem(src, newFixer(nil), fp); got.Line != w.line || got.Column != w.column {
			t.Errorf("%s at %d:%d, want %d:%d (%s)", fp.Flag, got.Line, got.Column, w.line, w.column, fp.Pointer())
		}
		fp.Err = errors.New("reworded")
		if got := flagProblem(src, newFixer(nil), fp); got.Line != w.line || got.Column != w.column {
			t.Errorf("%s reworded: at %d:%d, want %d:%d", fp.Flag, got.Line, got.Column, w.line, w.column)
		}
	}

	stdout, stderr, code := runCmd(t, "validate", file)
	wantStatus(t, code, exitNegative, stdout, stderr)
	for flag, w := range want {
		prefix := fmt.Sprintf("testdata/paths.json:%d:%d: error: flag %q: ", w.line, w.column, flag)
		if !strings.Contains(stdout, "\n"+prefix) {
			t.Errorf("no line starting %s in\n%s", prefix, stdout)
		}
	}
}
