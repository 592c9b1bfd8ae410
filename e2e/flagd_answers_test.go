package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"
	"go.yaml.in/yaml/v3"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/plainyaml"
	"github.com/flagsnap/flagsnap/syncserver"
)

// The flagd answers table: flag files written for flagd, the contexts they
// are asked in, and what the flagd daemon v0.16.0 answered, recorded once
// with
//
//	FLAGD_BIN=$(../shared/tools/build-flagd.sh) go test ./e2e -run TestFlagdAnswers -update-flagd-answers
//
// so that CI checks flagsnap against flagd without the daemon.
var updateAnswers = flag.Bool("update-flagd-answers", false, "ask the flagd daemon (FLAGD_BIN) again and rewrite testdata/flagd-answers/answers.json")

const answersDir = "testdata/flagd-answers"

// answerFiles are the flag files of the table, each with the contexts its
// flags are asked in.
var answerFiles = map[string][]openfeature.FlattenedContext{
	"numbers.json": {
		{}, {"n": 9007199254740992}, {"n": 9007199254740993}, {"n": 0},
	},
	"out-of-range-variant.json": {{}},
	"out-of-range-rule.json":    {{}, {"n": 1}},
	"broken-rules.json": {
		{}, {"x": 1, "email": "a@faas.com", "v": "1.0.0", "targetingKey": "k"}, {"email": "b@x.com", "targetingKey": "k"},
		{"x": 1, "targetingKey": "k2"},
	},
	"legacy-fractional.json":   {{}, {"email": "a@faas.com"}},
	"fractional-variants.json": {{"targetingKey": "u1"}, {"targetingKey": "u7"}},
	"null-variants.json":       {{}},
	"odd-definitions.json":     {{}},
	"rule-edges.json":          {{"targetingKey": "u1", "k": 1}},
	"ref-beside-members.json":  {{"email": "a@faas.com"}, {"email": "b@x.com"}},
	"duplicate-members.json":   {{}, {"k": 1}, {"k": "cat"}, {"k": []any{"a"}}},
	"empty-evaluator.json":     {{"email": "a@faas.com"}},
	"flags-array.json":         {{}},
	"ref-in-variants.json":     {{}},
	"ref-names.json":           {{}},
	"ref-whole.json":           {{}},
	"state-types.json":         {{}},
	"metadata-types.json":      {{}},
	"key-source-types.json":    {{}},
	"no-variants.json":         {{}},
	"yaml-forms.yaml":          {{}, {"n": 16}},
	"yaml-flow.yaml":           {{}, {"tier": "gold"}},
	"yaml-keys.yaml":           {{}},
	"metadata.json":            {{}, {"u": 1}},
	"context-properties.json": {
		{}, {"targetingKey": "u1"}, {"$flagd": map[string]any{"flagKey": "other", "timestamp": 1}},
		{"$flagd.flagKey": "other"}, {"a.b": 1}, {"a": map[string]any{"b": 1}}, {"a.b": 2, "a": map[string]any{"b": 1}},
		{"list": []any{"one", "two"}}, {"list": map[string]any{"1": "two"}}, {"targetingKey": ""},
	},
	"fractional-inputs.json": {
		{}, {"targetingKey": "u1"}, {"targetingKey": "u2", "id": "u2"}, {"targetingKey": "u3", "id": 7},
		{"targetingKey": "u4", "id": true}, {"targetingKey": "u5", "id": nil}, {"targetingKey": "u6", "id": 1.5},
		{"id": "alice", "w": 0}, {"id": "bob", "w": 30}, {"id": "carol", "w": "30"}, {"id": "dave", "w": -5},
		{"id": "erin", "pick": "a"}, {"id": "frank", "pick": "nope"}, {"id": "gina", "pick": 1},
		{"id": "", "targetingKey": ""}, {"id": "h\u00e9"}, {"id": []any{"x"}},
	},
	"custom-operators.json": {
		{"v": "1.0.0", "w": "1.0.0"}, {"v": "v1.0.0", "w": "1.0.0"}, {"v": "V1.0.0", "w": "1.0.0"},
		{"v": "1.0", "w": "1.0.0"}, {"v": "1", "w": "1.0.0"}, {"v": "1.0.0-alpha", "w": "1.0.0"},
		{"v": "1.0.0-alpha.1", "w": "1.0.0-alpha.beta"}, {"v": "1.0.0-rc.2", "w": "1.0.0-rc.10"},
		{"v": "1.0.0+build.5", "w": "1.0.0"}, {"v": "1.2.3", "w": "1.2.0"}, {"v": "1.3.0", "w": "1.2.0"},
		{"v": "2.0.0", "w": "1.2.0"}, {"v": "0.2.5", "w": "0.2.0"}, {"v": "0.3.0", "w": "0.2.0"},
		{"v": "0.0.3", "w": "0.0.2"}, {"v": "01.0.0", "w": "1.0.0"}, {"v": 1, "w": "1.0.0"},
		{"v": 1.5, "w": "1.5.0"}, {"v": " 1.0.0", "w": "1.0.0"}, {"v": "", "w": "1.0.0"},
		{"v": "1.0.0", "w": "v1"}, {"v": "1.2.3-beta", "w": "1.2.0"}, {"v": "1.2.3", "w": "1.2.3-beta"},
		{"s": "abc", "p": "ab"}, {"s": "abc", "p": "bc"}, {"s": "abc", "p": ""}, {"s": "ABC", "p": "ab"},
		{"s": 123, "p": "1"}, {"s": 123, "p": "3"}, {"s": "123", "p": 1}, {"s": true, "p": "t"},
		{"s": "héllo", "p": "hé"}, {"s": "x"}, {"p": "x"},
	},
}

// answer is one row: a flag of a file asked in a context, read as each of
// the types, and flagd's answer.
type answer struct {
	File    string                       `json:"file"`
	Flag    string                       `json:"flag"`
	Context openfeature.FlattenedContext `json:"context"`
	Types   []string                     `json:"types"`
	Flagd   ofrepAnswer                  `json:"flagd"`
}

// difference is a row where flagsnap answers otherwise than flagd, on
// purpose; the README's differences from flagd say why. want checks what
// flagsnap answers instead.
type difference struct {
	why  string
	want func(kind string, r resolution) bool
}

func parseError(_ string, r resolution) bool {
	return r.ErrorCode == string(openfeature.ParseErrorCode)
}

// served is a want for a row answered without an error, with variant.
func served(variant string) func(string, resolution) bool {
	return func(_ string, r resolution) bool { return r.ErrorCode == "" && r.Variant == variant }
}

var differences = map[string]difference{
	// flagd v0.16 no longer knows the legacy operator; flagsnap keeps
	// it, evaluated as fractional, as the way old files migrate.
	"legacy-fractional.json/legacy-string": {"fractionalEvaluation kept", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && (r.Variant == "red" || r.Variant == "blue")
	}},
	// flagd reads 9007199254740993 as the float 9007199254740992: a
	// value other than the file's, which flagsnap refuses at load. A sync
	// server that re-encodes the set as flagd does sends the float, which
	// flagsnap then answers as flagd does.
	"file:numbers.json/big-int":   {"an integer past 2^53 is refused", parseError},
	"file:numbers.json/max-int64": {"an integer past 2^53 is refused", parseError},
	// flagd drops the whole file over one number out of range; flagsnap
	// refuses only the flag that holds it.
	"out-of-range-variant.json/inf":   {"only the flag is refused", parseError},
	"out-of-range-variant.json/ok":    {"only the flag is refused", served("a")},
	"out-of-range-rule.json/inf-rule": {"only the flag is refused", parseError},
	// flagd drops the whole file over a state that is not a string, or
	// flag metadata that is not an object; flagsnap breaks only the flag.
	"state-types.json/state-number":       {"only the flag is refused", parseError},
	"state-types.json/ok":                 {"only the flag is refused", served("on")},
	"metadata-types.json/metadata-string": {"only the flag is refused", parseError},
	"metadata-types.json/ok": {"only the flag is refused", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && r.Variant == "a" && sameMetadata(r.Metadata, map[string]any{"team": "web"})
	}},
	// flagd drops the whole file over a flag's "key" or "source" that is
	// not a string; flagsnap breaks only the flag.
	"key-source-types.json/key-number":       {"only the flag is refused", parseError},
	"key-source-types.json/source-object":    {"only the flag is refused", parseError},
	"key-source-types.json/entry-key-number": {"only the flag is refused", parseError},
	"key-source-types.json/ok":               {"only the flag is refused", served("on")},
	"key-source-types.json/key-other":        {"only the flag is refused", served("off")},
	// flagd drops the whole file over a YAML key that is not a string,
	// which JSON cannot hold; flagsnap breaks only the flag that has one.
	"yaml-keys.yaml/1":                 {"only the flag is refused", parseError},
	"yaml-keys.yaml/numbered-variants": {"only the flag is refused", parseError},
	"yaml-keys.yaml/ok":                {"only the flag is refused", served("on")},
	// A definition without variants (null, {}, variants missing or
	// null) is broken; flagd serves the code default, or answers GENERAL
	// where a rule names a variant.
	"no-variants.json/definition-null":       {"a flag without variants is broken", parseError},
	"no-variants.json/definition-empty":      {"a flag without variants is broken", parseError},
	"no-variants.json/variants-null":         {"a flag without variants is broken", parseError},
	"no-variants.json/variants-missing":      {"a flag without variants is broken", parseError},
	"no-variants.json/variants-missing-rule": {"a flag without variants is broken", parseError},
	// Variants of mixed types (null beside a boolean) break the flag;
	// flagd serves it, and answers GENERAL where it serves the null.
	"null-variants.json/null-beside-a-boolean": {"variants of mixed types break the flag", parseError},
	"null-variants.json/null-picked":           {"variants of mixed types break the flag", parseError},
	"yaml-forms.yaml/tilde-null":               {"variants of mixed types break the flag", parseError},
	// flagd refuses the whole file over an evaluator that is {} (its
	// substitution works on the JSON text); flagsnap substitutes it, as
	// data.
	"empty-evaluator.json/uses-empty": {"an empty evaluator is data", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && r.Variant == "off" && r.Reason == "TARGETING_MATCH"
	}},
	"empty-evaluator.json/uses-staff": {"an empty evaluator is data", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && r.Variant == "on" && r.Reason == "TARGETING_MATCH"
	}},
	"empty-evaluator.json/plain": {"an empty evaluator is data", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && r.Variant == "on" && r.Reason == "STATIC"
	}},
	// $evaluators are substituted into variants and metadata too, as
	// flagd does; an object substituted into metadata is dropped.
	"ref-in-variants.json/meta-ref": {"metadata that is not a string, number or boolean is dropped", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && r.Variant == "a" && sameMetadata(r.Metadata, map[string]any{"s": "x", "n": 1})
	}},
	// flagd finds a $ref in the file's JSON text, where a name with <,
	// > or & is written escaped, so it never substitutes one; flagsnap
	// does. flagd's sync stream sends the $ref unsubstituted.
	"file:ref-names.json/escaped-name": {"a $ref's name is read as JSON", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && r.Variant == "on" && r.Reason == "TARGETING_MATCH"
	}},
	// A flag without variants is broken; flagd serves the code default.
	"rule-edges.json/empty-variants": {"a flag without variants is broken", parseError},
	// A null variant is a value of no type: TYPE_MISMATCH whatever the
	// type asked for, where flagd answers GENERAL.
	"null-variants.json/only-null": {"a null variant is of no type", func(_ string, r resolution) bool {
		return r.ErrorCode == string(openfeature.TypeMismatchCode) && r.Value == nil
	}},
	// OpenFeature's flag metadata holds strings, numbers and booleans:
	// flagsnap drops an array entry, flagd's OFREP answer carries it.
	"odd-definitions.json/metadata-nested": {"metadata that is not a string, number or boolean is dropped", func(_ string, r resolution) bool {
		return r.ErrorCode == "" && r.Variant == "on" && sameMetadata(r.Metadata, map[string]any{"owner": "a", "n": 3})
	}},
	"out-of-range-rule.json/ok": {"only the flag is refused", served("a")},
}

// refusedWhole are the files the daemon refuses whole, over one number out
// of range, an empty evaluator, a state, metadata, key or source of the
// wrong type, or a YAML key that is not a string: its sync stream sends
// none of their flags, where a sync server with flagd's encoding sends
// every flag (the member as written) or the document as written, and
// flagsnap refuses only a broken flag.
var refusedWhole = map[string]bool{"out-of-range-variant.json": true, "out-of-range-rule.json": true, "empty-evaluator.json": true,
	"state-types.json": true, "metadata-types.json": true, "key-source-types.json": true,
	"yaml-keys.yaml": true}

// overflows are the rows whose integer reading in flagd converts a float
// past int64's range, which Go leaves to the machine: flagsnap answers
// TYPE_MISMATCH for the integer type and agrees on the others.
var overflows = map[string]bool{"numbers.json/past-int64": true, "numbers.json/huge-exp": true, "sync:numbers.json/max-int64": true}

func loadAnswers(t *testing.T) []answer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(answersDir, "answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []answer
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// recordAnswers asks the daemon every row and writes the table.
func recordAnswers(t *testing.T, bin string) {
	var rows []answer
	files := make([]string, 0, len(answerFiles))
	for f := range answerFiles {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, file := range files {
		path, _ := filepath.Abs(filepath.Join(answersDir, file))
		flags := answerFileFlags(t, path)
		f := newFlagd(t, bin, path)
		ofrep := f.OFREPPort
		keys := make([]string, 0, len(flags))
		for k := range flags {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		waitFlags(t, ofrep, keys)
		for _, key := range keys {
			types := []string{variantKind(floats(flags[key]))}
			if types[0] == "int" {
				types = append(types, "float")
			}
			for _, ec := range answerFiles[file] {
				rows = append(rows, answer{File: file, Flag: key, Context: ec, Types: types, Flagd: askFlagd(t, ofrep, key, ec)})
			}
		}
		f.Kill(t)
	}
	out, err := json.MarshalIndent(rows, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(answersDir, "answers.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d answers", len(rows))
}

// TestFlagdAnswers checks flagsnap, reading each file and following a sync
// server that re-encodes it as flagd does, against the recorded answers of
// the flagd daemon. With FLAGD_BIN set it also asks the daemon again, so a
// table that no longer matches flagd is noticed, and follows the daemon's
// own sync stream, which must answer as the re-encoding does.
func TestFlagdAnswers(t *testing.T) {
	bin := os.Getenv(flagdBinEnv)
	if *updateAnswers {
		if bin == "" {
			t.Fatalf("-update-flagd-answers needs %s", flagdBinEnv)
		}
		recordAnswers(t, bin)
	}
	rows := loadAnswers(t)
	providers := map[string][2]*flagsnap.Provider{}
	for file := range answerFiles {
		path, _ := filepath.Abs(filepath.Join(answersDir, file))
		doc := readAnswerFile(t, path)
		srv, err := syncserver.New(syncserver.WithFlags(doc), syncserver.WithFlagdEncoding(path))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		if err := srv.ListenTCP("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		common := []flagsnap.Option{flagsnap.WithoutEnv(), flagsnap.WithDeadline(5 * time.Second)}
		providers[file] = [2]*flagsnap.Provider{
			newDaemonProvider(t, append(common, flagsnap.WithFile(path))...),
			newDaemonProvider(t, following(srv.Port(), common...)...),
		}
	}
	var live map[string]int                      // file → the daemon's OFREP port
	followers := map[string]*flagsnap.Provider{} // file → a provider following the daemon's sync stream
	if bin != "" && !*updateAnswers {
		live = map[string]int{}
		for file := range answerFiles {
			path, _ := filepath.Abs(filepath.Join(answersDir, file))
			d := newFlagd(t, bin, path)
			live[file] = d.OFREPPort
			var keys []string
			for _, row := range rows {
				if row.File == file {
					keys = append(keys, row.Flag)
				}
			}
			waitFlags(t, live[file], keys)
			followers[file] = newDaemonProvider(t, following(d.SyncPort, flagsnap.WithoutEnv(), flagsnap.WithDeadline(5*time.Second))...)
		}
	}
	compared := 0
	for _, row := range rows {
		id := row.File + "/" + row.Flag
		if live != nil {
			if now := askFlagd(t, live[row.File], row.Flag, row.Context); !sameAnswer(now, row.Flagd) {
				t.Errorf("%s %v: flagd answers %+v now, the table says %+v", id, row.Context, now, row.Flagd)
			}
		}
		for i, p := range providers[row.File] {
			mode := [...]string{"file", "sync"}[i]
			for _, kind := range row.Types {
				got := resolveAs(p, kind, row.Flag, row.Context)
				if f := followers[row.File]; f != nil && mode == "sync" {
					real := resolveAs(f, kind, row.Flag, row.Context)
					switch {
					case refusedWhole[row.File]:
						// The daemon's stream has no flags from the file.
						if real.ErrorCode != string(openfeature.FlagNotFoundCode) {
							t.Errorf("%s (%s) %v: following the daemon %+v, want FLAG_NOT_FOUND", id, kind, row.Context, real)
						}
					case !reflect.DeepEqual(real, got):
						t.Errorf("%s (%s) %v: following the daemon %+v, following its imitation %+v", id, kind, row.Context, real, got)
					}
				}
				compared++
				d, ok := differences[id]
				if !ok {
					d, ok = differences[mode+":"+id]
				}
				if ok {
					if !d.want(kind, got) {
						t.Errorf("%s (%s, %s) %v: flagsnap %+v; a known difference (%s) expects otherwise", id, mode, kind, row.Context, got, d.why)
					}
					continue
				}
				if (overflows[id] || overflows[mode+":"+id]) && kind == "int" {
					if got.ErrorCode != string(openfeature.TypeMismatchCode) {
						t.Errorf("%s (%s, int) %v: flagsnap %+v, want TYPE_MISMATCH", id, mode, row.Context, got)
					}
					continue
				}
				if !sameAsFlagd(got, row.Flagd) {
					t.Errorf("%s (%s, %s) %v: flagsnap %+v, flagd %+v", id, mode, kind, row.Context, got, row.Flagd)
				}
			}
		}
	}
	t.Logf("%d answers compared with flagd's", compared)
}

// answerFileFlags reads the variants of each flag of a file of the table,
// by key, from a "flags" object or array (the last definition of a key).
func answerFileFlags(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	var doc struct {
		Flags      json.RawMessage            `json:"flags"`
		Evaluators map[string]json.RawMessage `json:"$evaluators"`
	}
	if err := json.Unmarshal(answerFileJSON(t, path), &doc); err != nil {
		t.Fatal(err)
	}
	// whole is what a definition, or its "variants", written as one
	// {"$ref": name} stands for, as flagd substitutes it.
	whole := func(raw json.RawMessage) json.RawMessage {
		var ref map[string]json.RawMessage
		if json.Unmarshal(raw, &ref) == nil && len(ref) == 1 {
			var name string
			if json.Unmarshal(ref["$ref"], &name) == nil {
				if ev, ok := doc.Evaluators[name]; ok {
					return ev
				}
			}
		}
		return raw
	}
	out := map[string]map[string]any{}
	add := func(key string, def json.RawMessage) {
		var f struct {
			Key      any             `json:"key"`
			Variants json.RawMessage `json:"variants"`
		}
		if json.Unmarshal(whole(def), &f) != nil {
			if key != "" {
				out[key] = nil // a definition that is no object is a row too
			}
			return
		}
		if key == "" {
			if key, _ = f.Key.(string); key == "" {
				return
			}
		}
		dec := json.NewDecoder(bytes.NewReader(whole(f.Variants)))
		dec.UseNumber() // a number out of float64's range is a row too
		var variants map[string]any
		if dec.Decode(&variants) == nil {
			out[key] = variants
		} else {
			out[key] = nil
		}
	}
	var byKey map[string]json.RawMessage
	if err := json.Unmarshal(doc.Flags, &byKey); err == nil {
		for k, def := range byKey {
			add(k, def)
		}
		return out
	}
	var list []json.RawMessage
	if err := json.Unmarshal(doc.Flags, &list); err != nil {
		t.Fatal(err)
	}
	for _, def := range list {
		add("", def)
	}
	return out
}

// readAnswerFile reads a file of the table as it is: a sync server with
// flagd's encoding converts YAML to JSON as flagd does.
func readAnswerFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answerFileJSON is a file of the table as JSON, its YAML keys that are
// not strings written as text.
func answerFileJSON(t *testing.T, path string) []byte {
	t.Helper()
	b := readAnswerFile(t, path)
	if filepath.Ext(path) != ".yaml" {
		return b
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(plainyaml.Plain(doc))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitFlags gives flagd time to read its file, which it does after it
// listens: until one of keys is found, or 5s for a file it refuses.
func waitFlags(t *testing.T, port int, keys []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, k := range keys {
			if askFlagd(t, port, k, nil).ErrorCode != "FLAG_NOT_FOUND" {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// floats reads the numbers of variants as float64, as variantKind wants
// them; one out of range counts as whole.
func floats(variants map[string]any) map[string]any {
	out := make(map[string]any, len(variants))
	for k, v := range variants {
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			if err != nil {
				f = 0
			}
			v = f
		}
		out[k] = v
	}
	return out
}

func sameAnswer(a, b ofrepAnswer) bool {
	return a.ErrorCode == b.ErrorCode && a.Reason == b.Reason && a.Variant == b.Variant &&
		equalJSON(a.Value, b.Value) && sameMetadata(a.Metadata, b.Metadata)
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
