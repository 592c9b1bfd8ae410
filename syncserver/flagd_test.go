package syncserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The expectations are what the flagd daemon v0.16 sent for the same files
// (file source, read from the path given as "source").
func TestFlagdEncode(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{
			name: "defaults, $ref, metadata",
			doc: `{"$schema": "https://flagd.dev/schema/v0/flags.json", "metadata": {"team": "t", "version": 1},
			  "$evaluators": {"staff": {"==": ["a@b.c", {"var": ["email"]}]}},
			  "flags": {
			    "absent": {"state": "ENABLED", "variants": {"on": true, "off": false}},
			    "null": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": null, "targeting": {"if": [{"$ref": "staff"}, "on"]}},
			    "own": {"state": "DISABLED", "variants": {"n": 1.0, "m": 2.5}, "defaultVariant": "n", "metadata": {"version": 2, "owner": "x"},
			      "targeting": {"if": [{"$ref": "missing"}, "n"]}}}}`,
			want: `{"flags": {
			    "absent": {"state": "ENABLED", "defaultVariant": "", "variants": {"on": true, "off": false}, "source": "/f.json", "metadata": {"team": "t", "version": 1}},
			    "null": {"state": "ENABLED", "defaultVariant": "", "variants": {"on": true}, "targeting": {"if": [{"==": ["a@b.c", {"var": ["email"]}]}, "on"]},
			      "source": "/f.json", "metadata": {"team": "t", "version": 1}},
			    "own": {"state": "DISABLED", "defaultVariant": "n", "variants": {"n": 1, "m": 2.5}, "targeting": {"if": [{"$ref": "missing"}, "n"]},
			      "source": "/f.json", "metadata": {"team": "t", "version": 2, "owner": "x"}}}}`,
		},
		{
			name: "$ref in variants, metadata, state and defaultVariant",
			doc: `{"$evaluators": {"e": {"==": [1, 1]}, "on": "ENABLED", "first": "a"}, "metadata": {"top": {"$ref": "e"}},
			  "flags": {"f": {"state": {"$ref": "on"}, "variants": {"a": {"$ref": "e"}, "b": {"in": {"$ref": "e"}}, "c": {"$ref": "none"}, "d": "{\"$ref\": \"e\"}"},
			    "defaultVariant": {"$ref": "first"}, "metadata": {"m": {"$ref": "e"}}}}}`,
			want: `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "a",
			    "variants": {"a": {"==": [1, 1]}, "b": {"in": {"==": [1, 1]}}, "c": {"$ref": "none"}, "d": "{\"$ref\": \"e\"}"},
			    "source": "/f.json", "metadata": {"top": {"==": [1, 1]}, "m": {"==": [1, 1]}}}}}`,
		},
		{
			name: "$ref to a name JSON escapes",
			doc:  `{"$evaluators": {"a<b": true, "é": true}, "flags": {"f": {"state": "ENABLED", "variants": {"on": true}, "targeting": {"and": [{"$ref": "a<b"}, {"$ref": "é"}]}}}}`,
			want: `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "", "variants": {"on": true}, "targeting": {"and": [{"$ref": "a<b"}, true]}, "source": "/f.json"}}}`,
		},
		{
			// flagd refuses such a document whole: the flag's metadata is
			// sent as written, for the follower to refuse that flag.
			name: "flag metadata that is one $ref to a string",
			doc:  `{"$evaluators": {"s": "text"}, "flags": {"f": {"state": "ENABLED", "variants": {"on": true}, "metadata": {"$ref": "s"}}}}`,
			want: `{"flags": {"f": {"state": "ENABLED", "defaultVariant": "", "variants": {"on": true}, "metadata": "text", "source": "/f.json"}}}`,
		},
		{
			name: "a state and a default variant that are not strings, sent as written",
			doc:  `{"flags": {"f": {"state": 1, "variants": {"on": true}, "defaultVariant": true}}}`,
			want: `{"flags": {"f": {"state": 1, "defaultVariant": true, "variants": {"on": true}, "source": "/f.json"}}}`,
		},
		{
			name: "a null definition as {}, and one that is no object as written",
			doc:  `{"flags": {"n": null, "e": {}, "s": "text"}}`,
			want: `{"flags": {"n": {"state": "", "defaultVariant": "", "variants": null, "source": "/f.json"},
			    "e": {"state": "", "defaultVariant": "", "variants": null, "source": "/f.json"}, "s": "text"}}`,
		},
		{
			name: "a key and a source that are not strings, sent as written",
			doc:  `{"flags": {"f": {"key": 5, "variants": {"on": true}}, "g": {"key": "other", "source": ["x"], "variants": {"on": true}}}}`,
			want: `{"flags": {"f": {"key": 5, "state": "", "defaultVariant": "", "variants": {"on": true}, "source": "/f.json"},
			    "g": {"state": "", "defaultVariant": "", "variants": {"on": true}, "source": ["x"]}}}`,
		},
		{
			name: "flags as an array",
			doc:  `{"flags": [{"key": "k", "state": "ENABLED", "variants": {"a": "A"}, "defaultVariant": "a"}]}`,
			want: `{"flags": {"k": {"state": "ENABLED", "defaultVariant": "a", "variants": {"a": "A"}, "source": "/f.json"}}}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := flagdEncode([]byte(c.doc), "/f.json")
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal([]byte(got), &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.want), &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	// YAML is sent as the JSON flagd converts it to, numbers as floats.
	yamlDoc := "metadata: {team: t}\nflags:\n  f: {state: ENABLED, variants: {a: 9007199254740993, b: 2}, defaultVariant: b}\n"
	want := `{"flags":{"f":{"defaultVariant":"b","metadata":{"team":"t"},"source":"x","state":"ENABLED","variants":{"a":9007199254740992,"b":2}}}}`
	if got, err := flagdEncode([]byte(yamlDoc), "x"); err != nil || got != want {
		t.Errorf("YAML: %s (%v)\nwant %s", got, err, want)
	}
	for _, doc := range []string{"flags: [", "[1]", "flags:\n  1: {state: ENABLED}\n"} {
		if got, err := flagdEncode([]byte(doc), "x"); err == nil {
			t.Errorf("%q encoded as %s, want an error", doc, got)
		}
	}
	// flagd refuses these whole; the server then sends them as written,
	// for the follower to refuse too.
	for _, doc := range []string{
		`{"$evaluators": 5, "flags": {}}`,
		`{"metadata": "team", "flags": {}}`,
		`{"$evaluators": {"s": "text"}, "metadata": {"$ref": "s"}, "flags": {}}`,
	} {
		if got, err := flagdEncode([]byte(doc), "x"); err == nil {
			t.Errorf("%s encoded as %s, want an error", doc, got)
		}
	}
}

func TestWithFlagdEncoding(t *testing.T) {
	doc := `{"metadata": {"team": "t"}, "flags": {"a": {"state": "ENABLED", "variants": {"on": true}}}}`
	want := `{"flags":{"a":{"defaultVariant":"","metadata":{"team":"t"},"source":"flags.json","state":"ENABLED","variants":{"on":true}}}}`
	s := startTCP(t, WithFlags([]byte(doc)), WithFlagdEncoding("flags.json"))
	st := openStream(t, plain(t, s), "", "", "")
	recvFlags(t, st, want)
	// Sets given later are re-encoded too; raw payloads are not, and a
	// document flagd could not have read is passed on as it is.
	s.SetFlags([]byte(strings.Replace(doc, `"t"`, `"u"`, 1)))
	recvFlags(t, st, strings.Replace(want, `"t"`, `"u"`, 1))
	s.SendRaw("{not json")
	recvFlags(t, st, "{not json")
	s.SetFlags([]byte("{broken"))
	recvFlags(t, st, "{broken")
}

func TestWithStreamDeadline(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)), WithStreamDeadline(100*time.Millisecond))
	st := openStream(t, plain(t, s), "", "", "")
	recvFlags(t, st, flagsA)
	_, err := st.Recv()
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "server-side timeout") {
		t.Errorf("stream ended with %v, want flagd's DeadlineExceeded", err)
	}
}

func TestGoAwayTooManyPings(t *testing.T) {
	s := startTCP(t, WithFlags([]byte(flagsA)))
	st := openStream(t, plain(t, s), "", "", "")
	recvFlags(t, st, flagsA)
	if n, err := s.GoAwayTooManyPings(); n != 1 || err != nil {
		t.Fatalf("GoAwayTooManyPings: %d, %v; want 1 connection", n, err)
	}
	_, err := st.Recv()
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), `ENHANCE_YOUR_CALM, debug data: "too_many_pings"`) {
		t.Errorf("stream ended with %v, want the client to see too_many_pings", err)
	}
	// The server still serves.
	recvFlags(t, openStream(t, plain(t, s), "", "", ""), flagsA)

	tlsSrv := startTCP(t, WithTLS())
	if _, err := tlsSrv.GoAwayTooManyPings(); err == nil {
		t.Error("GoAwayTooManyPings with TLS: no error")
	}
	s.Stop()
	if _, err := s.GoAwayTooManyPings(); err == nil {
		t.Error("GoAwayTooManyPings on a stopped server: no error")
	}
}
