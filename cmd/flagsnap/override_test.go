package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// killCheckout turns testdata/flags.json's new-checkout off for everyone
// and adds a flag of its own; its own flag-set metadata merges into its
// flags, and its $ref resolves in its own $evaluators.
const killCheckout = `{
  "metadata": {"flagSetId": "ops", "incident": "INC-7"},
  "$evaluators": {"beta": {"in": [{"var": "email"}, ["ada@example.com"]]}},
  "flags": {
    "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"},
    "beta-banner": {"state": "ENABLED", "variants": {"yes": "yes", "no": "no"}, "defaultVariant": "no",
      "targeting": {"if": [{"$ref": "beta"}, "yes"]}, "metadata": {"owner": "web"}}
  }
}`

// reviveCheckout is a later override that defines new-checkout again.
const reviveCheckout = `{"flags": {"new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}}}`

// overrideFiles writes the documents into a temporary directory and
// returns their paths, in order.
func overrideFiles(t *testing.T, docs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, doc := range docs {
		path := filepath.Join(dir, "override"+string(rune('a'+i))+".json")
		writeFile(t, path, doc)
		paths = append(paths, path)
	}
	return paths
}

func TestEvalOverride(t *testing.T) {
	flags := testdata("flags.json")
	o := overrideFiles(t, killCheckout, reviveCheckout)
	ada := `{"targetingKey": "user-1", "email": "ada@example.com"}`
	tests := []struct {
		name string
		args []string
		want string // stdout, exactly
	}{
		{
			// Without the override, ada's email makes this TARGETING_MATCH on.
			name: "the override's flag replaces the file's",
			args: []string{flags, "new-checkout", "--override", o[0], "--context", ada},
			want: "value     false\nvariant   off\nreason    STATIC\nmetadata  {\"flagSetId\":\"ops\",\"incident\":\"INC-7\"}\n",
		},
		{
			name: "a flag only the override defines, its $ref resolved in the override",
			args: []string{flags, "beta-banner", "--override", o[0], "--context", ada},
			want: "value     \"yes\"\nvariant   yes\nreason    TARGETING_MATCH\nmetadata  {\"flagSetId\":\"ops\",\"incident\":\"INC-7\",\"owner\":\"web\"}\n",
		},
		{
			name: "a flag the override does not define stays the file's",
			args: []string{flags, "max-items", "--override", o[0], "--context", `{"appVersion": "2.1.0"}`},
			want: "value     50\nvariant   many\nreason    TARGETING_MATCH\nmetadata  {\"flagSetId\":\"shop\"}\n",
		},
		{
			name: "a later override wins",
			args: []string{flags, "new-checkout", "--override", o[0], "--override", o[1]},
			want: "value     true\nvariant   on\nreason    STATIC\n",
		},
		{
			name: "the order of the options decides",
			args: []string{flags, "new-checkout", "--override", o[1], "--override", o[0]},
			want: "value     false\nvariant   off\nreason    STATIC\nmetadata  {\"flagSetId\":\"ops\",\"incident\":\"INC-7\"}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, append([]string{"eval"}, tt.args...)...)
			wantStatus(t, code, exitOK, stdout, stderr)
			if stdout != tt.want {
				t.Errorf("stdout\n%s\nwant\n%s", stdout, tt.want)
			}
		})
	}
}

// --explain names the file that defined the flag: the override's path, or
// FILE's for a flag no override defines.
func TestEvalOverrideExplain(t *testing.T) {
	flags := testdata("flags.json")
	o := overrideFiles(t, killCheckout)
	tests := []struct {
		flag, layer string
	}{
		{"new-checkout", o[0]},
		{"beta-banner", o[0]},
		{"banner-color", flags},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, "eval", flags, tt.flag, "--override", o[0], "--explain", "--context", `{"targetingKey": "u"}`)
			wantStatus(t, code, exitOK, stdout, stderr)
			if want := "\ndefined by " + tt.layer + "\n"; !strings.Contains(stdout, want) {
				t.Errorf("text explanation does not say %q:\n%s", want, stdout)
			}
			stdout, stderr, code = runCmd(t, "eval", flags, tt.flag, "--override", o[0], "--explain", "--format", "json")
			wantStatus(t, code, exitOK, stdout, stderr)
			var got struct {
				Explanation struct {
					Layer string `json:"layer"`
				} `json:"explanation"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			if got.Explanation.Layer != tt.layer {
				t.Errorf("explanation's layer %q, want %q", got.Explanation.Layer, tt.layer)
			}
		})
	}
	// Without an override there is one document, and nothing to name.
	stdout, stderr, code := runCmd(t, "eval", flags, "new-checkout", "--explain")
	wantStatus(t, code, exitOK, stdout, stderr)
	if !strings.Contains(stdout, "\n\nflag \"new-checkout\" (") {
		t.Errorf("no explanation:\n%s", stdout)
	}
	if strings.Contains(stdout, "defined by") {
		t.Errorf("explanation of one document names a layer:\n%s", stdout)
	}
}

func TestEvalOverrideRefused(t *testing.T) {
	flags := testdata("flags.json")
	dir := t.TempDir()
	// "staff" is an evaluator of flags.json, not of the override: a $ref
	// does not reach across documents.
	crossRef := filepath.Join(dir, "cross-ref.json")
	writeFile(t, crossRef, `{"flags": {"new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false},
  "defaultVariant": "off", "targeting": {"if": [{"$ref": "staff"}, "on", "off"]}}}}`)
	// One broken flag refuses the whole override, the good flag with it.
	broken := filepath.Join(dir, "broken.json")
	writeFile(t, broken, `{"flags": {
  "new-checkout": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "max-items": {"state": "ENABLED", "variants": {"few": 1}, "defaultVariant": "none"}}}`)
	syntax := filepath.Join(dir, "syntax.json")
	writeFile(t, syntax, `{"flags": `)
	missing := filepath.Join(dir, "missing.json")
	good := overrideFiles(t, reviveCheckout)[0]
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a $ref to the main file's evaluator", []string{flags, "new-checkout", "--override", crossRef},
			[]string{"override " + crossRef + " refused", `$ref "staff" names no entry of $evaluators`, "a $ref resolves in the document that defines the flag"}},
		{"a broken flag", []string{flags, "new-checkout", "--override", broken},
			[]string{"override " + broken + " refused", `flag "max-items"`, `defaultVariant "none" is not one of the variants`}},
		{"a document that does not parse", []string{flags, "new-checkout", "--override", syntax},
			[]string{"override " + syntax + " refused", "invalid JSON"}},
		{"a missing override", []string{flags, "new-checkout", "--override", missing},
			[]string{"override " + missing + ": no such file", "eval reads an override once"}},
		{"an empty path", []string{flags, "new-checkout", "--override", ""},
			[]string{"want the path of a flag file"}},
		{"a flag defined nowhere", []string{flags, "nope", "--override", good},
			[]string{`flag "nope" is not defined in testdata/flags.json or its overrides (` + good + ")"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { evalRefused(t, tt.args, tt.want...) })
	}
}
