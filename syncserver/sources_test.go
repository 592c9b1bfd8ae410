package syncserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Three sources in the shapes flagd reads: flags of no set, flags whose own
// metadata names a set, a source whose metadata names a set that one flag
// overrides, a key in several sets and several sources, and flags flagd
// cannot store (flagSetId "") or files in no set (a number).
const (
	sourceA = `{"flags": {
	  "a-plain": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
	  "shared": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a"},
	  "a-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on", "metadata": {"flagSetId": "x"}},
	  "a-empty-id": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "metadata": {"flagSetId": ""}},
	  "a-num-id": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "metadata": {"flagSetId": 7}}}}`
	sourceB = `{"metadata": {"flagSetId": "x"}, "flags": {
	  "b-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
	  "b-in-y": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off", "metadata": {"flagSetId": "y"}},
	  "shared": {"state": "ENABLED", "variants": {"b": "b"}, "defaultVariant": "b"},
	  "a-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}`
	sourceC = `flags:
  - {key: shared, state: ENABLED, variants: {cy: cy}, defaultVariant: cy, metadata: {flagSetId: y}}
  - {key: shared, state: ENABLED, variants: {c: c}, defaultVariant: c}
  - {key: c-plain, state: ENABLED, variants: {"on": true}, defaultVariant: "on"}
`
)

func sourcesServer(t *testing.T) *Server {
	t.Helper()
	return startTCP(t,
		WithSource("A.json", []byte(sourceA), "flags/A.json", "file:A.json"),
		WithSource("B.json", []byte(sourceB), "flags/B.json", "A.json"),
		WithSource("C.yaml", []byte(sourceC), "shared-alias"),
		WithSource("D.json", []byte(`{"flags": {}}`), "shared-alias"))
}

// answer sums up a flag document as its flags, key=defaultVariant in key
// order, or a failed call as its status code.
func answer(doc string, err error) string {
	if err != nil {
		return status.Code(err).String()
	}
	var d struct {
		Flags map[string]struct {
			DefaultVariant string `json:"defaultVariant"`
		} `json:"flags"`
	}
	if e := json.Unmarshal([]byte(doc), &d); e != nil {
		return "not JSON: " + doc
	}
	out := make([]string, 0, len(d.Flags))
	for k, f := range d.Flags {
		out = append(out, k+"="+f.DefaultVariant)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func fetch(t *testing.T, c syncv1grpc.FlagSyncServiceClient, header string) string {
	t.Helper()
	ctx := callCtx(t)
	if header != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, SelectorHeader, header)
	}
	resp, err := c.FetchAllFlags(ctx, syncv1.FetchAllFlagsRequest_builder{}.Build())
	return answer(resp.GetFlagConfiguration(), err)
}

// The expectations are what the flagd daemon v0.16 answered for the same
// three files (started with -f file:A.json -f file:B.json -f file:C.yaml),
// except for the aliases, which flagd does not have, and the keys flagd
// takes by accident (key=, source_prefix=), which it answers with flags.
func TestSourceSelectors(t *testing.T) {
	s := sourcesServer(t)
	c := plain(t, s)
	all := "a-in-x=off a-num-id=on a-plain=on b-in-x=on b-in-y=off c-plain=on shared=cy"
	tests := []struct{ selector, want string }{
		// Flags of no set lose a shared key to named sets; a later source
		// wins a key and set over an earlier one (a-in-x); flagSetId ""
		// is never served (a-empty-id).
		{"", all},
		{"flagSetId=x", "a-in-x=off b-in-x=on shared=b"},
		{"flagSetId=y", "b-in-y=off shared=cy"},
		{"flagSetId=", "a-num-id=on a-plain=on c-plain=on shared=c"},
		{"flagSetId=7", ""},
		{"flagSetId=X", ""},
		{"flagSetId=x,source=B.json", ""},
		// A source keeps only the flags no later source overrides.
		{"source=A.json", "a-num-id=on a-plain=on"},
		{"source=B.json", "a-in-x=off b-in-x=on b-in-y=off shared=b"},
		{"source=C.yaml", "c-plain=on shared=cy"},
		{"C.yaml", "c-plain=on shared=cy"},
		{"source=", ""},
		{"nope.json", ""},
		// A name wins over an alias; an alias two sources share selects
		// both.
		{"A.json", "a-num-id=on a-plain=on"},
		{"flags/B.json", "a-in-x=off b-in-x=on b-in-y=off shared=b"},
		{"source=file:A.json", "a-num-id=on a-plain=on"},
		{"shared-alias", "c-plain=on shared=cy"},
		{"foo=bar", "InvalidArgument"},
		{"flagsetid=x", "InvalidArgument"},
		{"=A.json", "InvalidArgument"},
		{"key=shared", "InvalidArgument"},
		{"source_prefix=", "InvalidArgument"},
	}
	for _, tt := range tests {
		if got := fetch(t, c, tt.selector); got != tt.want {
			t.Errorf("FetchAllFlags %q: %s, want %s", tt.selector, got, tt.want)
		}
		st, err := startSync(t, c, "", "", tt.selector)
		var got string
		if err == nil {
			var resp *syncv1.SyncFlagsResponse
			resp, err = st.Recv()
			got = answer(resp.GetFlagConfiguration(), err)
		} else {
			got = answer("", err)
		}
		if got != tt.want {
			t.Errorf("SyncFlags %q: %s, want %s", tt.selector, got, tt.want)
		}
	}
	// The request's field is read as the header is.
	resp, err := c.FetchAllFlags(callCtx(t), syncv1.FetchAllFlagsRequest_builder{Selector: "flagSetId=y"}.Build())
	if got := answer(resp.GetFlagConfiguration(), err); got != "b-in-y=off shared=cy" {
		t.Errorf("selector field flagSetId=y: %s", got)
	}
}

// Each flag is sent as flagd sends it: the set's metadata under its own,
// its source named, evaluators substituted.
func TestSourceEncoding(t *testing.T) {
	doc := `{"metadata": {"flagSetId": "s", "team": "t"}, "$evaluators": {"e": {"==": [1, 1]}},
	  "flags": {"f": {"state": "ENABLED", "variants": {"n": 1.0}, "targeting": {"if": [{"$ref": "e"}, "n"]}, "metadata": {"team": "u"}}, "n": null}}`
	s := startTCP(t, WithSource("dir/f.json", []byte(doc)))
	want := `{"flags":{"f":{"defaultVariant":"","metadata":{"flagSetId":"s","team":"u"},"source":"dir/f.json","state":"ENABLED",` +
		`"targeting":{"if":[{"==":[1,1]},"n"]},"variants":{"n":1}},` +
		`"n":{"defaultVariant":"","metadata":{"flagSetId":"s","team":"t"},"source":"dir/f.json","state":"","variants":null}}}`
	resp, err := plain(t, s).FetchAllFlags(callCtx(t), syncv1.FetchAllFlagsRequest_builder{}.Build())
	if err != nil || resp.GetFlagConfiguration() != want {
		t.Errorf("FetchAllFlags: %v\n got %s\nwant %s", err, resp.GetFlagConfiguration(), want)
	}
}

// A change is sent to the streams whose selection it changes, and only to
// them.
func TestSetSource(t *testing.T) {
	s := sourcesServer(t)
	c := plain(t, s)
	inX := openStream(t, c, "", "", "flagSetId=x")
	ofC := openStream(t, c, "", "", "C.yaml")
	recvAnswer(t, inX, "a-in-x=off b-in-x=on shared=b")
	recvAnswer(t, ofC, "c-plain=on shared=cy")
	waitStreams(t, s, 2)

	// A's a-in-x is overridden by B's: neither selection changes.
	if err := s.SetSource("A.json", []byte(strings.Replace(sourceA, `"on", "metadata": {"flagSetId": "x"}`, `"off", "metadata": {"flagSetId": "x"}`, 1))); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSource("B.json", []byte(strings.Replace(sourceB, `"b-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}`,
		`"b-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}`, 1))); err != nil {
		t.Fatal(err)
	}
	recvAnswer(t, inX, "a-in-x=off b-in-x=off shared=b")
	if err := s.SetSource("C.yaml", []byte("flags: {c-plain: {state: ENABLED, variants: {x: 1}, defaultVariant: x}}")); err != nil {
		t.Fatal(err)
	}
	// The first message each stream gets after the first change is the one
	// its selection changed with.
	recvAnswer(t, ofC, "c-plain=x")
	// B loses a-in-x: A's, overridden until now, is served again.
	if err := s.SetSource("B.json", []byte(`{"flags": {}}`)); err != nil {
		t.Fatal(err)
	}
	recvAnswer(t, inX, "a-in-x=off")

	// A new source takes priority over the others; A's shared, which C no
	// longer overrides, is served again.
	if err := s.SetSource("E.json", []byte(`{"flags": {"a-plain": {"state": "ENABLED", "variants": {"e": "e"}, "defaultVariant": "e"}}}`)); err != nil {
		t.Fatal(err)
	}
	if got := fetch(t, c, "flagSetId="); got != "a-num-id=on a-plain=e c-plain=x shared=a" {
		t.Errorf("after adding E.json: %s", got)
	}

	for _, bad := range []string{`{"flags": `, `[1]`, `{"flags": {"f": 1}}`, `{"flags": "x"}`} {
		if err := s.SetSource("C.yaml", []byte(bad)); err == nil {
			t.Errorf("SetSource(%s): no error", bad)
		}
	}
	if got := fetch(t, c, "C.yaml"); got != "c-plain=x" {
		t.Errorf("after refused changes: %s", got)
	}
}

// SetSources changes several sources in one message to each stream, and
// none when one of its documents is refused.
func TestSetSources(t *testing.T) {
	s := sourcesServer(t)
	c := plain(t, s)
	all := openStream(t, c, "", "", "")
	recv(t, all)
	waitStreams(t, s, 1)

	// The version counts changes: one SetSource a source would count two,
	// however the stream's messages were merged.
	v := s.Version()
	if err := s.SetSources(map[string][]byte{
		"C.yaml": []byte("flags: {c-plain: {state: ENABLED, variants: {x: 1}, defaultVariant: x}}"),
		"D.json": []byte(`{"flags": {"d-new": {"state": "ENABLED", "variants": {"d": "d"}, "defaultVariant": "d"}}}`),
	}); err != nil {
		t.Fatal(err)
	}
	if got := s.Version(); got != v+1 {
		t.Errorf("version %d after SetSources of two sources from %d, want one change", got, v)
	}
	both := fetch(t, c, "")
	if !strings.Contains(both, "c-plain=x") || !strings.Contains(both, "d-new=d") {
		t.Fatalf("after SetSources: %s", both)
	}
	recvAnswer(t, all, both)
	// The next message is the next change: there was no second one for
	// the two sources.
	if err := s.SetSource("D.json", []byte(`{"flags": {}}`)); err != nil {
		t.Fatal(err)
	}
	recvAnswer(t, all, strings.Replace(both, " d-new=d", "", 1))

	before, v := fetch(t, c, ""), s.Version()
	err := s.SetSources(map[string][]byte{
		"C.yaml": []byte("flags: {c-plain: {state: ENABLED, variants: {y: 2}, defaultVariant: y}}"),
		"D.json": []byte(`{"flags": 1}`),
	})
	if err == nil || !strings.Contains(err.Error(), "D.json") {
		t.Errorf("SetSources with D.json broken: %v, want an error naming D.json", err)
	}
	if after := fetch(t, c, ""); after != before {
		t.Errorf("a refused SetSources changed the flags: %s, was %s", after, before)
	}
	if got := s.Version(); got != v {
		t.Errorf("version %d after a refused SetSources, was %d", got, v)
	}
}

func recvAnswer(t *testing.T, st syncStream, want string) {
	t.Helper()
	if got := answer(recv(t, st).GetFlagConfiguration(), nil); got != want {
		t.Fatalf("received %s, want %s", got, want)
	}
}

func TestSourcesMisuse(t *testing.T) {
	if _, err := New(WithSource("a", []byte(flagsA)), WithFlags([]byte(flagsB))); err == nil {
		t.Error("New with WithSource and WithFlags: no error")
	}
	if _, err := New(WithSource("a", []byte("{"))); err == nil {
		t.Error("New with a source that does not parse: no error")
	}
	for _, doc := range []string{`{"metadata": 5, "flags": {}}`, `{"$evaluators": [], "flags": {}}`} {
		if _, err := New(WithSource("a", []byte(doc))); err == nil {
			t.Errorf("New with a source flagd refuses whole (%s): no error", doc)
		}
	}
	if err := newServer(t, WithFlags([]byte(flagsA))).SetSource("a", []byte(flagsA)); err == nil {
		t.Error("SetSource without sources: no error")
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("SetFlags on a server with sources did not panic")
		}
	}()
	newServer(t, WithSource("a", []byte(flagsA))).SetFlags([]byte(flagsB))
}

// A source in YAML, in its block or its flow style, or after a byte order
// mark, is read as the same flags as in JSON; one with a key that is not a
// string is refused.
func TestSourceInYAML(t *testing.T) {
	want, err := decodeSource("f", []byte(`{"flags": {"f": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{
		"flags:\n  f: {state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n",
		`{flags: {f: {state: ENABLED, variants: {"on": true}, defaultVariant: "on"}}}`,
		"\xef\xbb\xbf" + `{"flags": {"f": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}`,
		"\xef\xbb\xbfflags:\n  f: {state: ENABLED, variants: {'on': true}, defaultVariant: 'on'}\n",
	} {
		if got, err := decodeSource("f", []byte(doc)); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v (%v), want %v", doc, got, err, want)
		}
	}
	// flagd refuses YAML with a key that is not a string, which JSON
	// cannot hold.
	for _, doc := range []string{"flags:\n  1: {state: ENABLED, variants: {'on': true}}\n", "flags:\n  f: {state: ENABLED, variants: {2: true}}\n"} {
		if got, err := decodeSource("f", []byte(doc)); err == nil {
			t.Errorf("%q: %v, want an error", doc, got)
		}
	}
}

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "all"},
		{"flags.json", "source flags.json"},
		{"source=a=b.json", "source a=b.json"},
		{"flagSetId=", "flagSetId "},
		{"flagSetId=a,source=b", "flagSetId a,source=b"},
		{"flagSetId = a", "error"},
		{"a=b.json", "error"},
	}
	for _, tt := range tests {
		q, err := parseSelector(tt.in)
		got := fmt.Sprintf("%s %s", q.key, q.value)
		switch {
		case err != nil:
			got = "error"
		case q.all:
			got = "all"
		}
		if got != tt.want {
			t.Errorf("parseSelector(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
