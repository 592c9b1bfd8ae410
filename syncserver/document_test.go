package syncserver

import (
	"testing"

	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Document answers, byte for byte, what FetchAllFlags answers for the same
// selector, or fails with the same status.
func TestDocumentIsFetchAllFlags(t *testing.T) {
	servers := map[string]*Server{
		"sources": sourcesServer(t),
		"sets":    startTCP(t, WithFlags([]byte(flagsA)), WithSelectorFlags("b", []byte(flagsB))),
	}
	selectors := []string{"", "flagSetId=x", "flagSetId=", "source=B.json", "C.yaml", "nope.json", "foo=bar", "b", "c"}
	for name, s := range servers {
		c := plain(t, s)
		for _, sel := range selectors {
			ctx := callCtx(t)
			if sel != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, SelectorHeader, sel)
			}
			resp, wantErr := c.FetchAllFlags(ctx, syncv1.FetchAllFlagsRequest_builder{}.Build())
			doc, _, err := s.Document(sel)
			if doc != resp.GetFlagConfiguration() || status.Code(err) != status.Code(wantErr) {
				t.Errorf("%s: Document(%q) = %q, %v; FetchAllFlags: %q, %v", name, sel, doc, err, resp.GetFlagConfiguration(), wantErr)
			}
		}
	}
}

// Version grows with each change of what is served, and only then, and
// Document gives the version of the document it returns.
func TestVersion(t *testing.T) {
	s := newServer(t, WithSource("a.json", []byte(flagsA)))
	v0 := s.Version()
	steps := []struct {
		name   string
		change func()
		grows  bool
	}{
		{"SetSource", func() { _ = s.SetSource("a.json", []byte(flagsB)) }, true},
		{"a source added", func() { _ = s.SetSource("b.json", []byte(flagsA)) }, true},
		{"SetStatus", func() { s.SetStatus(codes.Unavailable, "down") }, true},
		{"SetStatus OK", func() { s.SetStatus(codes.OK, "") }, true},
		{"a refused SetSource", func() { _ = s.SetSource("a.json", []byte("{")) }, false},
		{"SetSyncContext", func() { s.SetSyncContext(map[string]any{"k": "v"}) }, false},
		{"SetMetadata", func() { s.SetMetadata(map[string]any{"k": "v"}) }, false},
		{"SendRaw", func() { s.SendRaw("{") }, false},
	}
	last := v0
	for _, st := range steps {
		st.change()
		v := s.Version()
		if grew := v > last; grew != st.grows {
			t.Errorf("%s: version %d after %d", st.name, v, last)
		}
		if _, dv, _ := s.Document(""); dv != v {
			t.Errorf("%s: Document's version %d, Version %d", st.name, dv, v)
		}
		last = v
	}
	sets := newServer(t)
	before := sets.Version()
	sets.SetSelectorFlags("x", []byte(flagsA))
	if sets.Version() <= before {
		t.Errorf("SetSelectorFlags: version %d after %d", sets.Version(), before)
	}
}
