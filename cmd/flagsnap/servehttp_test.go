package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	syncv1 "buf.build/gen/go/open-feature/flagd/protocolbuffers/go/flagd/sync/v1"
	"google.golang.org/grpc/status"

	"github.com/flagsnap/flagsnap/internal/logtest"
	"github.com/flagsnap/flagsnap/syncserver"
)

// countingDocs counts the documents the handler asks the sync server for.
type countingDocs struct {
	*syncserver.Server
	calls atomic.Int64
}

func (c *countingDocs) Document(selector string) (string, uint64, error) {
	c.calls.Add(1)
	return c.Server.Document(selector)
}

// handlerServer is a sync server with the files of the selector table, not
// listening: the handler reads it in process.
func handlerServer(t *testing.T) *countingDocs {
	t.Helper()
	var opts []syncserver.Option
	for _, name := range []string{"A.json", "B.json", "C.yaml"} {
		opts = append(opts, syncserver.WithSource(name, []byte(selectorTableFiles[name])))
	}
	srv, err := syncserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &countingDocs{Server: srv}
}

// request asks h in process, with headers given as "Name: value".
func request(h http.Handler, method, target string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ": ")
		r.Header.Add(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// etagOf is the ETag of doc served as is, or gzipped: a hash of its bytes.
func etagOf(doc string, gzipped bool) string {
	sum := sha256.Sum256([]byte(doc))
	if gzipped {
		return fmt.Sprintf(`"%x-gz"`, sum[:16])
	}
	return fmt.Sprintf(`"%x"`, sum[:16])
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	out, err := gunzipped(b)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

func gunzipped(b []byte) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(zr)
	return string(out), err
}

func TestFlagsHandler(t *testing.T) {
	docs := handlerServer(t)
	h := newFlagsHandler(docs, (&logtest.Buffer{}).Logger())
	all, _, err := docs.Document("")
	if err != nil {
		t.Fatal(err)
	}
	inX, _, err := docs.Document("flagSetId=x")
	if err != nil {
		t.Fatal(err)
	}
	etag, gzETag := etagOf(all, false), etagOf(all, true)

	const (
		identity = "identity"
		gzipped  = "gzip"
		noBody   = "none"
	)
	tests := []struct {
		name, method, target string
		headers              []string
		status               int
		etag                 string // "" for none
		body                 string // identity, gzipped, noBody, or text the body holds
		doc                  string // the document of identity and gzipped; all when ""
	}{
		{name: "GET", target: "/flags.json", status: 200, etag: etag, body: identity},
		{name: "empty selector", target: "/flags.json?selector=", status: 200, etag: etag, body: identity},
		{name: "selector", target: "/flags.json?selector=flagSetId%3Dx", status: 200, etag: etagOf(inX, false), body: identity, doc: inX},
		{name: "other parameters ignored", target: "/flags.json?v=2&selector=flagSetId=x", status: 200, body: identity, doc: inX},
		{name: "unknown source: empty, as over gRPC", target: "/flags.json?selector=nope.json", status: 200, body: identity, doc: `{"flags":{}}`},
		{name: "selector flagd cannot read", target: "/flags.json?selector=foo=bar", status: 404, body: `selector "foo=bar": unknown key "foo"`},
		{name: "two selectors", target: "/flags.json?selector=A.json&selector=B.json", status: 400, body: "2 selectors, give one"},
		{name: "bad query", target: "/flags.json?selector=%zz", status: 400, body: "bad query"},
		{name: "HEAD", method: "HEAD", target: "/flags.json", status: 200, etag: etag, body: noBody},
		{name: "HEAD gzip", method: "HEAD", target: "/flags.json", headers: []string{"Accept-Encoding: gzip"}, status: 200, etag: gzETag, body: noBody},
		{name: "POST", method: "POST", target: "/flags.json", status: 405, body: "use GET or HEAD"},
		{name: "PUT", method: "PUT", target: "/flags.json", status: 405, body: "use GET or HEAD"},
		{name: "other path", target: "/", status: 404, body: "the flags are at /flags.json"},
		{name: "path below", target: "/flags.json/x", status: 404, body: "the flags are at /flags.json"},

		{name: "gzip", target: "/flags.json", headers: []string{"Accept-Encoding: gzip, deflate, br"}, status: 200, etag: gzETag, body: gzipped},
		{name: "x-gzip", target: "/flags.json", headers: []string{"Accept-Encoding: x-gzip"}, status: 200, etag: gzETag, body: gzipped},
		{name: "gzip weighted", target: "/flags.json", headers: []string{"Accept-Encoding: br;q=1.0, GZIP ; q=0.5"}, status: 200, etag: gzETag, body: gzipped},
		{name: "gzip;q=0", target: "/flags.json", headers: []string{"Accept-Encoding: gzip;q=0"}, status: 200, etag: etag, body: identity},
		{name: "gzip;q=0 beside *", target: "/flags.json", headers: []string{"Accept-Encoding: *, gzip;q=0"}, status: 200, etag: etag, body: identity},
		{name: "*", target: "/flags.json", headers: []string{"Accept-Encoding: *"}, status: 200, etag: gzETag, body: gzipped},
		{name: "identity only", target: "/flags.json", headers: []string{"Accept-Encoding: identity"}, status: 200, etag: etag, body: identity},
		{name: "weight that does not parse", target: "/flags.json", headers: []string{"Accept-Encoding: gzip;q=x"}, status: 200, etag: etag, body: identity},

		{name: "If-None-Match", target: "/flags.json", headers: []string{"If-None-Match: " + etag}, status: 304, etag: etag, body: noBody},
		{name: "If-None-Match weak", target: "/flags.json", headers: []string{"If-None-Match: W/" + etag}, status: 304, etag: etag, body: noBody},
		{name: "If-None-Match list", target: "/flags.json", headers: []string{`If-None-Match: "old", W/"older",` + etag}, status: 304, etag: etag, body: noBody},
		{name: "If-None-Match lines", target: "/flags.json", headers: []string{`If-None-Match: "old"`, "If-None-Match: " + etag}, status: 304, etag: etag, body: noBody},
		{name: "If-None-Match *", target: "/flags.json", headers: []string{"If-None-Match: *"}, status: 304, etag: etag, body: noBody},
		{name: "If-None-Match gzip", target: "/flags.json", headers: []string{"Accept-Encoding: gzip", "If-None-Match: " + gzETag}, status: 304, etag: gzETag, body: noBody},
		{name: "If-None-Match * gzip", target: "/flags.json", headers: []string{"Accept-Encoding: gzip", "If-None-Match: *"}, status: 304, etag: gzETag, body: noBody},
		// A client holding the other encoding of the same document holds
		// a current one: 304, with the tag it holds.
		{name: "If-None-Match identity, gzip accepted", target: "/flags.json", headers: []string{"Accept-Encoding: gzip", "If-None-Match: " + etag}, status: 304, etag: etag, body: noBody},
		{name: "If-None-Match gzip, identity asked", target: "/flags.json", headers: []string{"If-None-Match: " + gzETag}, status: 304, etag: gzETag, body: noBody},
		{name: "If-None-Match HEAD", method: "HEAD", target: "/flags.json", headers: []string{"If-None-Match: " + etag}, status: 304, etag: etag, body: noBody},
		{name: "If-None-Match old", target: "/flags.json", headers: []string{`If-None-Match: "0123"`}, status: 200, etag: etag, body: identity},
		{name: "If-None-Match unquoted", target: "/flags.json", headers: []string{"If-None-Match: " + strings.Trim(etag, `"`)}, status: 200, etag: etag, body: identity},
		{name: "If-None-Match of another selector", target: "/flags.json?selector=flagSetId=x", headers: []string{"If-None-Match: " + etag}, status: 200, body: identity, doc: inX},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := request(h, orElse(tt.method, "GET"), tt.target, tt.headers...)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.etag != "" && w.Header().Get("ETag") != tt.etag {
				t.Errorf("ETag %s, want %s", w.Header().Get("ETag"), tt.etag)
			}
			checkHeaders(t, w, tt.status, tt.body == gzipped || (tt.body == noBody && tt.etag == gzETag))
			doc := orElse(tt.doc, all)
			switch got := w.Body.String(); tt.body {
			case identity:
				if got != doc {
					t.Errorf("body %s, want %s", got, doc)
				}
			case gzipped:
				if g := gunzip(t, w.Body.Bytes()); g != doc {
					t.Errorf("gunzipped body %s, want %s", g, doc)
				}
			case noBody:
				if got != "" {
					t.Errorf("body %q, want none", got)
				}
			default:
				if !strings.Contains(got, tt.body) {
					t.Errorf("body %q, want it to say %q", got, tt.body)
				}
			}
		})
	}
}

// checkHeaders checks the headers of an answer of each status.
func checkHeaders(t *testing.T, w *httptest.ResponseRecorder, status int, gz bool) {
	t.Helper()
	var want map[string]string
	switch status {
	case 200:
		want = map[string]string{"Content-Type": "application/json", "Cache-Control": "no-cache", "Vary": "Accept-Encoding",
			"Content-Length": "", "Content-Encoding": ""}
		if gz {
			want["Content-Encoding"] = "gzip"
		}
	case 304:
		want = map[string]string{"Cache-Control": "no-cache", "Vary": "Accept-Encoding", "Content-Type": "", "Content-Encoding": ""}
	case 405:
		want = map[string]string{"Allow": "GET, HEAD", "ETag": ""}
	default:
		want = map[string]string{"ETag": ""}
	}
	for k, v := range want {
		got := w.Header().Get(k)
		if k == "Content-Length" {
			if got == "" {
				t.Error("no Content-Length")
			}
			continue
		}
		if got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if cl := w.Header().Get("Content-Length"); status == 200 && w.Body.Len() > 0 && cl != strconv.Itoa(w.Body.Len()) {
		t.Errorf("Content-Length %s for %d bytes", cl, w.Body.Len())
	}
}

// Answers are made once per selector and version of the flags: polls
// between two changes cost no document and no compression. A change gives
// new answers and new ETags; a change that leaves a selection as it was
// leaves its ETag.
func TestFlagsHandlerKeepsAnswers(t *testing.T) {
	docs := handlerServer(t)
	var logs logtest.Buffer
	h := newFlagsHandler(docs, logs.Logger())
	get := func(selector string, headers ...string) *httptest.ResponseRecorder {
		t.Helper()
		w := request(h, "GET", "/flags.json?selector="+url.QueryEscape(selector), headers...)
		if w.Code != 200 {
			t.Fatalf("GET %q: %d %s", selector, w.Code, w.Body)
		}
		return w
	}
	first := get("C.yaml")
	for range 5 {
		if w := get("C.yaml"); w.Header().Get("ETag") != first.Header().Get("ETag") || w.Body.String() != first.Body.String() {
			t.Fatalf("a second poll got %s %s, the first %s %s", w.Header().Get("ETag"), w.Body, first.Header().Get("ETag"), first.Body)
		}
		get("C.yaml", "Accept-Encoding: gzip")
	}
	if n := docs.calls.Load(); n != 1 {
		t.Errorf("%d documents made for 11 polls of one selector, want 1", n)
	}
	if n := logs.Count(`msg="flags ready over HTTP" selector=C.yaml bytes=`); n != 1 {
		t.Errorf("the selector logged %d times:\n%s", n, logs.String())
	}

	// B changes; C's selection does not, A's does.
	ofA := get("A.json")
	if err := docs.SetSource("B.json", []byte(`{"flags": {}}`)); err != nil {
		t.Fatal(err)
	}
	if w := get("C.yaml"); w.Header().Get("ETag") != first.Header().Get("ETag") {
		t.Errorf("C.yaml's ETag changed with B.json: %s, then %s", first.Header().Get("ETag"), w.Header().Get("ETag"))
	}
	w := get("A.json")
	if w.Header().Get("ETag") == ofA.Header().Get("ETag") || w.Body.String() == ofA.Body.String() {
		t.Errorf("A.json after B.json changed: ETag %s and body %s as before", w.Header().Get("ETag"), w.Body)
	}
	if want, _, _ := docs.Document("A.json"); w.Body.String() != want {
		t.Errorf("A.json after the change: %s, want %s", w.Body, want)
	}
	if n := docs.calls.Load(); n != 5 {
		t.Errorf("%d documents made, want 5", n)
	}
}

// Past maxKept selectors, answers are made for each request: served all
// the same, and logged once.
func TestFlagsHandlerBound(t *testing.T) {
	docs := handlerServer(t)
	var logs logtest.Buffer
	h := newFlagsHandler(docs, logs.Logger())
	h.maxKept = 2
	for range 3 {
		for _, sel := range []string{"A.json", "B.json", "C.yaml"} {
			w := request(h, "GET", "/flags.json?selector="+sel)
			if want, _, _ := docs.Document(sel); w.Code != 200 || w.Body.String() != want {
				t.Fatalf("%s: %d %s, want %s", sel, w.Code, w.Body, want)
			}
		}
	}
	// Each request above asked for one document; the test's own calls to
	// Document count too.
	if n := docs.calls.Load(); n != 2+3+9 {
		t.Errorf("%d documents made, want 14: 2 kept, C.yaml made 3 times, and the test's 9", n)
	}
	if n := logs.Count("more selectors asked for than are kept"); n != 1 {
		t.Errorf("the bound logged %d times, want once:\n%s", n, logs.String())
	}
	if len(h.kept) != 2 {
		t.Errorf("%d answers kept, want 2", len(h.kept))
	}
}

// Polls and changes at once: every answer is a whole document of one
// version, its ETag that of its bytes.
func TestFlagsHandlerConcurrent(t *testing.T) {
	docs := handlerServer(t)
	h := newFlagsHandler(docs, (&logtest.Buffer{}).Logger())
	docsOf := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				headers := []string{}
				if (g+i)%2 == 0 {
					headers = append(headers, "Accept-Encoding: gzip")
				}
				w := request(h, "GET", "/flags.json?selector=A.json", headers...)
				body, gz := w.Body.String(), w.Header().Get("Content-Encoding") == "gzip"
				if gz {
					var err error
					if body, err = gunzipped(w.Body.Bytes()); err != nil {
						t.Errorf("gunzip: %v", err)
						return
					}
				}
				if got, want := w.Header().Get("ETag"), etagOf(body, gz); got != want {
					t.Errorf("ETag %s, want %s for %s", got, want, body)
				}
				mu.Lock()
				docsOf[body] = true
				mu.Unlock()
			}
		})
	}
	for i := range 20 {
		def := map[bool]string{true: "on", false: "off"}[i%2 == 0]
		doc := strings.Replace(selectorTableFiles["A.json"], `"defaultVariant": "on"}`, `"defaultVariant": "`+def+`"}`, 1)
		if err := docs.SetSource("A.json", []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for doc := range docsOf {
		if got := flagsAnswer(t, doc, nil); got != "a-num-id=on a-plain=on" && got != "a-num-id=on a-plain=off" {
			t.Errorf("an answer of no version: %s", doc)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"gzip"}, true},
		{[]string{"GZip"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"deflate, gzip;q=1.0, *;q=0.5"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.000"}, false},
		{[]string{"gzip;q=0.001"}, true},
		{[]string{"gzip;Q=0"}, false},
		{[]string{"*"}, true},
		{[]string{"*;q=0"}, false},
		{[]string{"*, gzip;q=0"}, false},
		{[]string{"gzip;q=0", "*"}, false},
		{[]string{"br", "gzip"}, true},
		{[]string{"identity"}, false},
		{[]string{"br, deflate"}, false},
		{[]string{"gzip;q=2"}, false},
		{[]string{"gzip;q=-1"}, false},
		{[]string{"gzip;q=NaN"}, false},
		{[]string{"gzip;q="}, false},
		{[]string{"gzip;level=1"}, true},
		{[]string{"gzipper"}, false},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestCurrentTag(t *testing.T) {
	const sel, other = `"abc"`, `"abc-gz"`
	tests := []struct {
		header []string
		want   string // "" for no match
	}{
		{nil, ""},
		{[]string{`"abc"`}, sel},
		{[]string{`W/"abc"`}, sel},
		{[]string{`"abc-gz"`}, other},
		{[]string{`W/"abc-gz", "abc"`}, sel},
		{[]string{`"x", "y"`, `"abc"`}, sel},
		{[]string{`"x","abc"`}, sel},
		{[]string{"*"}, sel},
		{[]string{`"ab"`}, ""},
		{[]string{`abc`}, ""},
		{[]string{`"abc`}, ""},
		{[]string{`w/"abc"`}, ""},
		{[]string{`"a,b", "abc"`}, sel},
		{[]string{`garbage, "abc"`}, ""},
	}
	for _, tt := range tests {
		got, ok := currentTag(tt.header, sel, other)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("currentTag(%q) = %s, %v, want %s", tt.header, got, ok, tt.want)
		}
	}
}

var httpLine = regexp.MustCompile(`serving \S+ over HTTP on (http://\S+/flags\.json)\n`)

// httpURL waits for serve to say where it serves the flags over HTTP, and
// returns that address.
func (r *serveRun) httpURL(t *testing.T) string {
	t.Helper()
	var url string
	waitFor(t, "the HTTP address", func() bool {
		m := httpLine.FindStringSubmatch(r.stdout.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	return url
}

// httpClient asks over TCP, leaving Accept-Encoding to the test.
func httpClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: wait}
}

func httpGet(t *testing.T, c *http.Client, method, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	return httpRequest(t, c, method, url, nil, headers...)
}

// httpRequest sends body (none when nil) with the headers given as
// "Name: value", and returns the answer and its body, within wait.
func httpRequest(t *testing.T, c *http.Client, method, url string, body []byte, headers ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ": ")
		req.Header.Add(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, answer
}

// streamDoc is the first flag document a SyncFlags stream with selector is
// sent, or its failure.
func streamDoc(t *testing.T, addr, selector string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	st, err := syncClient(t, addr).SyncFlags(selectorContext(ctx, selector), &syncv1.SyncFlagsRequest{})
	if err != nil {
		return "", err
	}
	resp, err := st.Recv()
	return resp.GetFlagConfiguration(), err
}

// flagsnap serve --http serves, for every selector of the table, the bytes
// a sync stream with that selector is sent, over real TCP; a change of a
// file reaches the next poll with a new ETag.
func TestServeHTTP(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range selectorTableFiles {
		writeFile(t, filepath.Join(dir, name), doc)
	}
	r := startServe(t, filepath.Join(dir, "A.json"), "--addr", "127.0.0.1:0", "--selector-dir", dir, "--http", "127.0.0.1:0")
	base := r.httpURL(t)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("serving HTTP on %s", base)
	}
	c := httpClient(t)

	for _, tc := range selectorTable(dir) {
		want, wantErr := streamDoc(t, r.addr, tc.selector)
		resp, body := httpGet(t, c, "GET", base+"?selector="+url.QueryEscape(tc.selector))
		if wantErr != nil {
			if resp.StatusCode != 404 || !strings.Contains(string(body), status.Convert(wantErr).Message()) {
				t.Errorf("%q: %d %s, want 404 saying %s", tc.selector, resp.StatusCode, body, status.Convert(wantErr).Message())
			}
			continue
		}
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("%q: %d %s, want the stream's %s", tc.selector, resp.StatusCode, body, want)
		}
	}

	resp, body := httpGet(t, c, "GET", base)
	etag := resp.Header.Get("ETag")
	resp, zbody := httpGet(t, c, "GET", base, "Accept-Encoding: gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || gunzip(t, zbody) != string(body) {
		t.Errorf("gzip: %q, %d bytes, not the document gzipped", resp.Header.Get("Content-Encoding"), len(zbody))
	}
	resp, head := httpGet(t, c, "HEAD", base)
	if resp.StatusCode != 200 || len(head) != 0 || resp.ContentLength != int64(len(body)) || resp.Header.Get("ETag") != etag {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %d, ETag %s", resp.StatusCode, len(head), resp.ContentLength, resp.Header.Get("ETag"))
	}
	if resp, _ := httpGet(t, c, "GET", base, "If-None-Match: "+etag); resp.StatusCode != 304 {
		t.Errorf("If-None-Match the current ETag: %d", resp.StatusCode)
	}

	writeFile(t, filepath.Join(dir, "C.yaml"), "flags: {c-plain: {state: ENABLED, variants: {x: 1}, defaultVariant: x}}\n")
	waitFor(t, "the change over HTTP", func() bool {
		resp, _ := httpGet(t, c, "GET", base, "If-None-Match: "+etag)
		return resp.StatusCode == 200
	})
	resp, body = httpGet(t, c, "GET", base)
	if want, err := streamDoc(t, r.addr, ""); err != nil || string(body) != want || resp.Header.Get("ETag") == etag {
		t.Errorf("after the change: %s, ETag %s (before: %s), want the stream's %s (%v)", body, resp.Header.Get("ETag"), etag, want, err)
	}

	if code := r.stop(); code != exitOK {
		t.Errorf("serve ended with %d: %s", code, r.stderr)
	}
	if conn, err := net.DialTimeout("tcp", strings.TrimSuffix(strings.TrimPrefix(base, "http://"), flagsPath), wait); err == nil {
		_ = conn.Close()
		t.Error("the HTTP port still answers after serve ended")
	}
}

// An HTTP address in use is bad input, reported before anything is served.
func TestServeHTTPBadAddress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, colorDoc("red"))
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{busy.Addr().String(), "127.0.0.1:notaport"} {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		var out, errOut bytes.Buffer
		code := runContext(ctx, []string{"serve", path, "--addr", "127.0.0.1:0", "--http", addr}, &out, &errOut)
		cancel()
		wantStatus(t, code, exitBadInput, out.String(), errOut.String())
		wantOneLine(t, errOut.String(), "--http: ")
		if out.Len() != 0 {
			t.Errorf("serve printed %q", out.String())
		}
	}
}

// The usage names the option, its paths and how answers are cached.
func TestServeHTTPUsage(t *testing.T) {
	stdout, _, code := runCmd(t, "serve", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"[--http ADDR]", "GET /flags.json?selector=S", "If-None-Match", "gzip", "1,000 selectors", "  --http string"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("usage does not say %q", want)
		}
	}
}
