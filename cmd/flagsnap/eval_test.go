package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flagsnap/flagsnap/internal/jsonline"
)

func TestEval(t *testing.T) {
	flags := testdata("flags.json")
	tests := []struct {
		name string
		args []string
		code int
		want string // stdout, exactly
	}{
		{
			name: "targeting match through a $ref",
			args: []string{flags, "new-checkout", "--context", `{"targetingKey": "user-1", "email": "ada@example.com"}`},
			want: "value     true\nvariant   on\nreason    TARGETING_MATCH\nmetadata  {\"flagSetId\":\"shop\",\"owner\":\"payments\"}\n",
		},
		{
			name: "options before the arguments",
			args: []string{"--context", `{"email": "bob@elsewhere.org"}`, flags, "new-checkout"},
			want: "value     false\nvariant   off\nreason    TARGETING_MATCH\nmetadata  {\"flagSetId\":\"shop\",\"owner\":\"payments\"}\n",
		},
		{
			name: "fractional v2",
			args: []string{flags, "banner-color", "--context", `{"targetingKey": "user-3"}`},
			want: "value     \"blue\"\nvariant   blue\nreason    TARGETING_MATCH\nmetadata  {\"flagSetId\":\"shop\"}\n",
		},
		{
			// user-3 moves from blue to red with typed hashing.
			name: "fractional v3",
			args: []string{flags, "banner-color", "--fractional", "v3", "--context", `{"targetingKey": "user-3"}`},
			want: "value     \"red\"\nvariant   red\nreason    TARGETING_MATCH\nmetadata  {\"flagSetId\":\"shop\"}\n",
		},
		{
			name: "int",
			args: []string{flags, "max-items", "--type", "int", "--context", `{"appVersion": "2.1.0"}`},
			want: "value     50\nvariant   many\nreason    TARGETING_MATCH\nmetadata  {\"flagSetId\":\"shop\"}\n",
		},
		{
			name: "default variant when the rule answers null",
			args: []string{flags, "max-items", "--context", `{"appVersion": "1.9"}`},
			want: "value     10\nvariant   few\nreason    DEFAULT\nmetadata  {\"flagSetId\":\"shop\"}\n",
		},
		{
			name: "disabled",
			args: []string{flags, "legacy-banner"},
			want: "value     (the caller's default)\nreason    DISABLED\nmetadata  {\"flagSetId\":\"shop\"}\n",
		},
		{
			name: "type mismatch",
			args: []string{flags, "max-items", "--type", "bool"},
			code: exitNegative,
			want: "value     (the caller's default)\nvariant   few\nreason    ERROR\nerror     TYPE_MISMATCH: flag \"max-items\": variant \"few\" is a number, not a boolean\nmetadata  {\"flagSetId\":\"shop\"}\n",
		},
		{
			name: "a flag with a problem",
			args: []string{testdata("bad.json"), "ops"},
			code: exitNegative,
			want: "value     (the caller's default)\nreason    ERROR\nerror     PARSE_ERROR: flag \"ops\": /flags/ops/targeting/if/0/startswith: unknown operator \"startswith\"; did you mean \"starts_with\"?\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, append([]string{"eval"}, tt.args...)...)
			wantStatus(t, code, tt.code, stdout, stderr)
			if stdout != tt.want {
				t.Errorf("stdout\n%s\nwant\n%s", stdout, tt.want)
			}
		})
	}
}

func TestEvalContextFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctx.json")
	if err := os.WriteFile(path, []byte(`{"targetingKey": "user-1", "email": "ada@example.com"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCmd(t, "eval", testdata("flags.json"), "new-checkout", "--context-file", path)
	wantStatus(t, code, exitOK, stdout, stderr)
	if !strings.HasPrefix(stdout, "value     true\n") {
		t.Errorf("stdout %s", stdout)
	}
}

func TestEvalJSON(t *testing.T) {
	stdout, stderr, code := runCmd(t, "eval", "--format", "json", testdata("flags.json"), "max-items", "--type", "int", "--context", `{"appVersion": "3"}`)
	wantStatus(t, code, exitOK, stdout, stderr)
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	want := map[string]any{
		"flag": "max-items", "value": 50.0, "variant": "many", "reason": "TARGETING_MATCH",
		"type": "int", "metadata": map[string]any{"flagSetId": "shop"},
	}
	if jsonline.String(got) != jsonline.String(want) {
		t.Errorf("got %s\nwant %s", jsonline.String(got), jsonline.String(want))
	}
}

// evalRefused runs eval with args and checks that it refuses them as bad
// input, saying every part of want on one line and nothing on stdout.
func evalRefused(t *testing.T, args []string, want ...string) {
	t.Helper()
	stdout, stderr, code := runCmd(t, append([]string{"eval"}, args...)...)
	wantStatus(t, code, exitBadInput, stdout, stderr)
	wantOneLine(t, stderr, want...)
	if stdout != "" {
		t.Errorf("stdout: %s", stdout)
	}
}

func TestEvalBadInput(t *testing.T) {
	flags := testdata("flags.json")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"missing file", []string{"missing.json", "a"}, []string{"missing.json", "no such file or directory"}},
		{"file that does not load", []string{testdata("syntax.json"), "a"}, []string{"syntax.json", "invalid JSON at line 5, column 45: expected , or } after the value: add a comma"}},
		{"unknown flag", []string{flags, "nope"}, []string{`flag "nope" is not defined in testdata/flags.json`}},
		{"misspelt flag", []string{flags, "new-chekout"}, []string{`flag "new-chekout" is not defined in testdata/flags.json; did you mean "new-checkout"?`}},
		{"invalid context", []string{flags, "new-checkout", "--context", `{"email": }`}, []string{"--context is not a JSON object", "invalid character"}},
		{"context not an object", []string{flags, "new-checkout", "--context", `[1]`}, []string{"--context is not a JSON object"}},
		{"context null", []string{flags, "new-checkout", "--context", `null`}, []string{"--context is not a JSON object: null"}},
		{"both contexts", []string{flags, "new-checkout", "--context", `{}`, "--context-file", "x.json"}, []string{"not both"}},
		{"missing context file", []string{flags, "new-checkout", "--context-file", "missing-ctx.json"}, []string{"--context-file missing-ctx.json", "no such file"}},
		{"unknown type", []string{flags, "new-checkout", "--type", "boolean"}, []string{`--type must be bool, string, int, float, object, not "boolean"`}},
		{"unknown version", []string{flags, "new-checkout", "--fractional", "v4"}, []string{`--fractional must be v1, v2 or v3, not "v4"`}},
		{"missing flag argument", []string{flags}, []string{"want FILE and FLAG, got 1 argument(s)"}},
		{"unknown option", []string{flags, "new-checkout", "--explian"}, []string{"unknown option --explian; did you mean --explain?", "flagsnap eval --help"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { evalRefused(t, tt.args, tt.want...) })
	}
}

func TestHelp(t *testing.T) {
	for _, command := range []string{"validate", "eval", "simulate", "serve"} {
		for _, opt := range []string{"--help", "-h"} {
			stdout, stderr, code := runCmd(t, command, opt)
			wantStatus(t, code, exitOK, stdout, stderr)
			for _, want := range []string{"Usage: flagsnap " + command, "Example:", "Options:"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("%s %s does not say %q:\n%s", command, opt, want, stdout)
				}
			}
			// The list of options writes them as the usage does.
			_, list, _ := strings.Cut(stdout, "\nOptions:\n")
			for _, line := range strings.Split(strings.TrimRight(list, "\n"), "\n") {
				if !strings.HasPrefix(line, "  --") && !strings.HasPrefix(line, "    \t") {
					t.Errorf("%s %s: option line %q", command, opt, line)
				}
			}
		}
	}
	stdout, _, code := runCmd(t, "--help")
	if code != exitOK || !strings.Contains(stdout, "flagsnap validate FILE...") {
		t.Errorf("flagsnap --help: status %d\n%s", code, stdout)
	}
	_, stderr, code := runCmd(t, "explain")
	wantStatus(t, code, exitBadInput, "", stderr)
	wantOneLine(t, stderr, `unknown command "explain"`)
	_, stderr, code = runCmd(t)
	if code != exitBadInput || !strings.Contains(stderr, "Usage:") {
		t.Errorf("no arguments: status %d, stderr %s", code, stderr)
	}
}

// An evaluation that reaches a broken part says where it is and why as
// flagsnap validate does, with the same JSON Pointer, and the suggestion
// validate gives as its fix when it is one.
func TestEvalSaysWhatValidateSays(t *testing.T) {
	bad := testdata("bad.json")
	stdout, _, _ := runCmd(t, "validate", "--format", "json", bad)
	var report struct {
		Files []fileReport `json:"files"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	byFlag := map[string]problem{}
	for _, p := range report.Files[0].Problems {
		if p.Source == "flagsnap" {
			byFlag[p.Flag] = p
		}
	}
	for _, tt := range []struct {
		flag     string
		withHint bool // validate's fix is the evaluation's suggestion
	}{
		{"ops", true},
		{"refs", false},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			p := byFlag[tt.flag]
			want := `flag "` + tt.flag + `": ` + p.Path + ": " + p.Message
			if tt.withHint {
				want += "; " + p.Fix
			}
			stdout, _, code := runCmd(t, "eval", "--format", "json", bad, tt.flag)
			var r result
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != exitNegative {
				t.Fatalf("eval: %v, exit %d: %s", err, code, stdout)
			}
			if r.Error != "PARSE_ERROR" || r.Message != want {
				t.Errorf("eval says %s %q\nvalidate says %q", r.Error, r.Message, want)
			}
		})
	}
}
