package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"buf.build/gen/go/open-feature/flagd/grpc/go/flagd/sync/v1/syncv1grpc"
	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flagsnap/flagsnap/internal/flagdtest"
)

// The files of the selector table, in the shapes flagd reads: flags of no
// set, a set named by the file's metadata and overridden by one flag's, a
// set named by a flag alone, one key in three sets and three files, a key
// and set in two files, a flagSetId that is not a string and one that is ""
// (which flagd cannot store, and never serves), an array of flags in YAML.
var selectorTableFiles = map[string]string{
	"A.json": `{"flags": {
  "a-plain": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
  "shared": {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a"},
  "a-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on", "metadata": {"flagSetId": "x"}},
  "a-empty-id": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "metadata": {"flagSetId": ""}},
  "a-num-id": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on", "metadata": {"flagSetId": 7}}}}`,
	"B.json": `{"metadata": {"flagSetId": "x"}, "flags": {
  "b-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"},
  "b-in-y": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off", "metadata": {"flagSetId": "y"}},
  "shared": {"state": "ENABLED", "variants": {"b": "b"}, "defaultVariant": "b"},
  "a-in-x": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off"}}}`,
	"C.yaml": `flags:
  - {key: shared, state: ENABLED, variants: {cy: cy}, defaultVariant: cy, metadata: {flagSetId: y}}
  - {key: shared, state: ENABLED, variants: {c: c}, defaultVariant: c}
  - {key: c-plain, state: ENABLED, variants: {"on": true}, defaultVariant: "on"}
`,
}

// selectorCase is one selector and the answers to it: the flags sent
// (key=defaultVariant, in key order; "(none)" for an empty set) or the
// status code of the failure.
type selectorCase struct {
	selector  string // "" sends no selector
	want      string // serve's answer, to FetchAllFlags and SyncFlags alike
	flagd     string // flagd's answer to FetchAllFlags, when it is not want
	flagdSync string // flagd's first answer to SyncFlags, when it is not flagd
}

// selectorTable holds what flagd v0.16.0 answered, started in dir with
// -f file:A.json -f file:B.json -f file:C.yaml, and what serve answers
// for dir/A.json with --selector-dir dir.
func selectorTable(dir string) []selectorCase {
	all := "a-in-x=off a-num-id=on a-plain=on b-in-x=on b-in-y=off c-plain=on shared=cy"
	ofA := "a-num-id=on a-plain=on"
	ofB := "a-in-x=off b-in-x=on b-in-y=off shared=b"
	ofC := "c-plain=on shared=cy"
	// flagd looks up what precedes "=" among the indexes of its store:
	// where there is none, FetchAllFlags fails with Internal and SyncFlags
	// sends empty flag sets without end.
	const (
		unknown     = "Internal"
		unknownSync = "(none) again and again"
	)
	return []selectorCase{
		// A key in several sets: a named set wins over no set, and of
		// named sets the last in order (y). A key and set in several
		// files: the later file wins (a-in-x from B, shared of no set
		// from C). flagSetId "" is never served (a-empty-id).
		{selector: "", want: all},
		{selector: "flagSetId=x", want: "a-in-x=off b-in-x=on shared=b"},
		{selector: "flagSetId=y", want: "b-in-y=off shared=cy"},
		{selector: "flagSetId=", want: "a-num-id=on a-plain=on c-plain=on shared=c"},
		{selector: "flagSetId=7", want: "(none)"},
		{selector: "flagSetId=X", want: "(none)"},
		// The whole rest is the id: there is one key per selector.
		{selector: "flagSetId=x,source=B.json", want: "(none)"},
		// A file's flags that a later file overrides are not among its
		// own (shared and a-in-x of A).
		{selector: "source=A.json", want: ofA},
		{selector: "source=B.json", want: ofB},
		{selector: "source=C.yaml", want: ofC},
		{selector: "A.json", want: ofA},
		{selector: "C.yaml", want: ofC},
		{selector: "source=", want: "(none)"},
		{selector: "nope.json", want: "(none)"},
		{selector: "source=nope.json", want: "(none)"},
		// flagd knows a file by what followed "file:" in its -f option
		// only; serve by that, its name, its path and its URI.
		{selector: "source=file:A.json", want: ofA, flagd: "(none)"},
		{selector: "source=" + filepath.Join(dir, "A.json"), want: ofA, flagd: "(none)"},
		{selector: filepath.Join(dir, "B.json"), want: ofB, flagd: "(none)"},
		{selector: "source=file://" + filepath.ToSlash(filepath.Join(dir, "C.yaml")), want: ofC, flagd: "(none)"},
		// Selectors flagd cannot read: serve says so.
		{selector: "foo=bar", want: "InvalidArgument", flagd: unknown, flagdSync: unknownSync},
		{selector: "flagsetid=x", want: "InvalidArgument", flagd: unknown, flagdSync: unknownSync},
		{selector: "flagSetId = x", want: "InvalidArgument", flagd: unknown, flagdSync: unknownSync},
		{selector: "=A.json", want: "InvalidArgument", flagd: unknown, flagdSync: unknownSync},
		{selector: "priority=1", want: "InvalidArgument", flagd: unknown, flagdSync: unknownSync},
		// Indexes of flagd's store that its documentation does not name,
		// and which it answers with flags.
		{selector: "key=shared", want: "InvalidArgument", flagd: "shared=cy"},
		{selector: "source_prefix=", want: "InvalidArgument", flagd: all},
	}
}

// TestServeSelectorsAsFlagd asks serve, and the flagd daemon when FLAGD_BIN
// names one, for the flags of every selector of the table over the same
// three files.
func TestServeSelectorsAsFlagd(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range selectorTableFiles {
		writeFile(t, filepath.Join(dir, name), doc)
	}
	table := selectorTable(dir)

	t.Run("serve", func(t *testing.T) {
		r := startServe(t, filepath.Join(dir, "A.json"), "--addr", "127.0.0.1:0", "--selector-dir", dir)
		if !strings.Contains(r.stdout.String(), ", sources: A.json, B.json, C.yaml\n") {
			t.Errorf("start line %q: A.json, in DIR, should be served once, first", r.stdout)
		}
		c := syncClient(t, r.addr)
		for _, tc := range table {
			if got := fetchAnswer(t, c, tc.selector); got != tc.want {
				t.Errorf("FetchAllFlags %q: %s, want %s", tc.selector, got, tc.want)
			}
			if got := syncAnswer(t, c, tc.selector); got != tc.want {
				t.Errorf("SyncFlags %q: %s, want %s", tc.selector, got, tc.want)
			}
		}
	})
	t.Run("flagd", func(t *testing.T) {
		bin := os.Getenv("FLAGD_BIN")
		if bin == "" {
			t.Skip("FLAGD_BIN is not set: no flagd daemon to compare with")
		}
		c := syncClient(t, startFlagdIn(t, bin, dir, "A.json", "B.json", "C.yaml"))
		waitFor(t, "flagd to read the three files", func() bool { return fetchAnswer(t, c, "") == table[0].want })
		for _, tc := range table {
			want := orElse(tc.flagd, tc.want)
			if got := fetchAnswer(t, c, tc.selector); got != want {
				t.Errorf("FetchAllFlags %q: %s, want %s", tc.selector, got, want)
			}
			want = orElse(tc.flagdSync, want)
			if got := syncAnswer(t, c, tc.selector); got != want {
				t.Errorf("SyncFlags %q: %s, want %s", tc.selector, got, want)
			}
		}
	})
}

func orElse(s, otherwise string) string {
	if s != "" {
		return s
	}
	return otherwise
}

func syncClient(t *testing.T, addr string) syncv1grpc.FlagSyncServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return syncv1grpc.NewFlagSyncServiceClient(conn)
}

func selectorContext(ctx context.Context, selector string) context.Context {
	if selector == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "flagd-selector", selector)
}

func fetchAnswer(t *testing.T, c syncv1grpc.FlagSyncServiceClient, selector string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	resp, err := c.FetchAllFlags(selectorContext(ctx, selector), &syncv1.FetchAllFlagsRequest{})
	return flagsAnswer(t, resp.GetFlagConfiguration(), err)
}

// syncAnswer is the first answer of a SyncFlags stream, noting whether
// another follows at once: a server whose flags do not change sends one.
func syncAnswer(t *testing.T, c syncv1grpc.FlagSyncServiceClient, selector string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	st, err := c.SyncFlags(selectorContext(ctx, selector), &syncv1.SyncFlagsRequest{})
	if err != nil {
		return flagsAnswer(t, "", err)
	}
	resp, err := st.Recv()
	got := flagsAnswer(t, resp.GetFlagConfiguration(), err)
	if err != nil {
		return got
	}
	next := make(chan error, 1)
	go func() {
		_, err := st.Recv()
		next <- err
	}()
	select {
	case err := <-next:
		if err == nil {
			got += " again and again"
		}
	case <-time.After(50 * time.Millisecond):
		cancel()
		<-next
	}
	return got
}

func flagsAnswer(t *testing.T, doc string, err error) string {
	t.Helper()
	if err != nil {
		return status.Code(err).String()
	}
	var d struct {
		Flags map[string]struct {
			DefaultVariant string `json:"defaultVariant"`
		} `json:"flags"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("a flag set that is not JSON: %v: %s", err, doc)
	}
	if len(d.Flags) == 0 {
		return "(none)"
	}
	out := make([]string, 0, len(d.Flags))
	for k, f := range d.Flags {
		out = append(out, k+"="+f.DefaultVariant)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// startFlagdIn runs the flagd daemon in dir on the files named, in that
// order, until the test ends, and returns the address of its sync port.
func startFlagdIn(t *testing.T, bin, dir string, files ...string) string {
	t.Helper()
	var args []string
	for _, f := range files {
		args = append(args, "-f", "file:"+f)
	}
	return flagdtest.Start(t, bin, dir, args...).SyncAddr()
}
