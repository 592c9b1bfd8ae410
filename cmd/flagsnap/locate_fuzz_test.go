package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/plainyaml"
)

// addSeeds adds the test data files with one of the extensions, and docs.
func addSeeds(f *testing.F, docs []string, exts ...string) {
	for _, ext := range exts {
		files, _ := filepath.Glob(filepath.Join("testdata", "*"+ext))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, d := range docs {
		f.Add([]byte(d))
	}
}

// reported are the pointers the evaluator gives for a document: where its
// problems, its warnings and a document error are. ok is false when the
// document does not parse.
func reported(data []byte) (ptrs []string, ok bool) {
	var logged loadLog
	set, err := evaluator.Load(data, evaluator.WithLogger(slog.New(&logged)))
	var de *evaluator.DocumentError
	switch {
	case errors.As(err, &de):
		return []string{de.Pointer()}, true
	case err != nil:
		return nil, false
	}
	for _, p := range set.Problems() {
		ptrs = append(ptrs, p.Pointer())
	}
	for _, w := range logged.records {
		ptrs = append(ptrs, w.pointer)
	}
	return ptrs, true
}

// FuzzSourceMapJSON holds the position mapping of JSON documents: it never
// panics, every position it gives is in the file, and every pointer the
// evaluator reports has a position; one written in the document is that
// of its key or its value, not of an ancestor.
func FuzzSourceMapJSON(f *testing.F) {
	addSeeds(f, []string{
		`{"flags": {"a/b~c": {"state": "ON", "variants": {"": 1e999, "x": "s"}, "defaultVariant": 3}}}`,
		`{"flags": [{"key": "a", "variants": {"x": 1}}, {"variants": {}}, {"key": "a"}]}`,
		`{"flags": {"a": {"variants": {"x": 1}, "targeting": {"if": [{"$ref": "r"}, {"nope": [1]}]}}}, "$evaluators": {"r": {"in": 3}}}`,
		`{"flags": {"a": 1, "a": {"variants": {"x": 1}, "defaultVariant": "y"}}}`,
		"\xef\xbb\xbf{\n\t\"flags\": {\"é\": {\"variants\": {\"x\": [1, {\"y\": 2}]}, \"metadata\": {\"m\": []}}}}",
		`[[[{"flags": 1}]]]`,
		`{"flags": 3}`,
		`{"flags": {"a": {"variants": {"x": 1}}`,
	}, ".json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if !plainyaml.IsJSON(data) {
			return
		}
		src := newSourceMap(data)
		lines := bytes.Split(data, []byte("\n"))
		inFile := func(p pos) bool {
			return p.line >= 1 && p.line <= len(lines) && p.column >= 1 && p.column <= len(lines[p.line-1])+1
		}
		if root := src.find(""); root != (pos{}) && !inFile(root) {
			t.Fatalf("the document at %+v, outside the file", root)
		}
		ptrs, ok := reported(data)
		if !ok {
			return
		}
		doc, err := schemaInstance(data)
		if err != nil {
			t.Fatalf("the evaluator read the document, the schema check cannot: %v", err)
		}
		for _, ptr := range ptrs {
			p := src.find(ptr)
			if !inFile(p) {
				t.Fatalf("%q at %+v, not a position in the file", ptr, p)
			}
			tok := splitPointer(ptr)
			if _, written := lookupOK(doc, tok); !written || len(tok) == 0 {
				continue
			}
			// A member is found at its key, an element at its value.
			c := lines[p.line-1][p.column-1]
			_, isMember := lookup(doc, tok[:len(tok)-1]).(map[string]any)
			switch {
			case isMember && c != '"':
				t.Fatalf("%q at %+v, at %q rather than its key", ptr, p, c)
			case !isMember && !strings.ContainsRune(`{["-0123456789tfn`, rune(c)):
				t.Fatalf("%q at %+v, at %q rather than its value", ptr, p, c)
			}
		}
	})
}

// FuzzSourceMapYAML holds the position mapping of YAML documents: it never
// panics, and every position it gives for a pointer the evaluator reports
// is in the file, in lines and characters as the YAML parser counts them.
func FuzzSourceMapYAML(f *testing.F) {
	addSeeds(f, []string{
		"flags:\n  a: &def\n    variants: {x: 1}\n    defaultVariant: y\n  b: *def\n",
		"base: &base {state: ENABLED, variants: {on: true}}\nflags:\n  a:\n    <<: *base\n    defaultVariant: off\n",
		"flags:\n  - key: a\n    variants: {x: .inf}\n  - variants: {}\n",
		"a: &a [x, *a]\nflags: {}\n",
		"flags:\r\n  \u00e9: {variants: {x: 1}, targeting: {nope: 1}}\u2028",
		"\t",
	}, ".yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if plainyaml.IsJSON(data) || len(data) > 1<<16 {
			return
		}
		src := newSourceMap(data)
		lines := yamlLines(data)
		inFile := func(p pos) bool {
			return p.line >= 1 && p.line <= len(lines) && p.column >= 1 && p.column <= utf8.RuneCount(lines[p.line-1])+1
		}
		ptrs, ok := reported(data)
		if !ok {
			return
		}
		for _, ptr := range append(ptrs, "") {
			if p := src.find(ptr); p != (pos{}) && !inFile(p) {
				t.Fatalf("%q at %+v, not a position in the file", ptr, p)
			}
		}
	})
}

// yamlLines splits a document where the YAML parser starts a new line.
func yamlLines(data []byte) [][]byte {
	var lines [][]byte
	start := 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == '\r' && i+1 < len(data) && data[i+1] == '\n':
			size = 2
			fallthrough
		case r == '\n', r == '\r', r == '\u0085', r == '\u2028', r == '\u2029':
			lines = append(lines, data[start:i])
			start = i + size
		}
		i += size
	}
	return append(lines, data[start:])
}
