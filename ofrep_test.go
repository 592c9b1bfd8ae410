package flagsnap

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/source"
)

// ofrepFlags has a flag of each kind an OFREP answer must tell apart.
const ofrepFlags = `{"metadata": {"flagSetId": "shop", "version": "7"}, "flags": {
  "color":    {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red",
               "metadata": {"owner": "web"}},
  "beta":     {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
               "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "on"]}},
  "limit":    {"state": "ENABLED", "variants": {"low": 10, "high": 2.5}, "defaultVariant": "low"},
  "layout":   {"state": "ENABLED", "variants": {"a": {"cols": 2, "tags": ["x"]}}, "defaultVariant": "a"},
  "off":      {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "nodefault": {"state": "ENABLED", "variants": {"on": true, "off": false}},
  "broken":   {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope"},
  "wrong":    {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on",
               "targeting": {"var": "email"}, "metadata": {"flagSetId": "admin"}},
  "admin-only": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on",
               "metadata": {"flagSetId": "admin"}}
}}`

// ofrepServer serves OFREP for a provider on a memory source holding doc.
func ofrepServer(t *testing.T, doc string, opts ...OFREPOption) (*httptest.Server, *Provider, *source.Memory) {
	t.Helper()
	m := source.NewMemory([]byte(doc))
	p, err := NewProvider(WithoutEnv(), WithSource(m))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ofrep/", OFREPHandler(p, opts...))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		p.Shutdown()
		srv.Close()
	})
	return srv, p, m
}

// send sends body to path with the headers given as name, value pairs,
// and returns the answer, its body unread.
func send(t *testing.T, srv *httptest.Server, method, path, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// post is send with the answer's body read.
func post(t *testing.T, srv *httptest.Server, method, path, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	resp := send(t, srv, method, path, body, headers...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestOFREPSingleFlag(t *testing.T) {
	srv, _, _ := ofrepServer(t, ofrepFlags)
	const user = `{"context": {"targetingKey": "u1", "email": "ann@example.com"}}`
	deep := `{"context": {"a": ` + strings.Repeat(`[`, maxContextDepth+1) + strings.Repeat(`]`, maxContextDepth+1) + `}}`
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"static string", "POST", "/ofrep/v1/evaluate/flags/color", user, 200,
			`{"key":"color","reason":"STATIC","variant":"red","value":"red","metadata":{"flagSetId":"shop","owner":"web","version":"7"}}`},
		{"targeting match", "POST", "/ofrep/v1/evaluate/flags/beta", user, 200,
			`{"key":"beta","reason":"TARGETING_MATCH","variant":"on","value":true,"metadata":{"flagSetId":"shop","version":"7"}}`},
		{"targeting default", "POST", "/ofrep/v1/evaluate/flags/beta", `{"context": {"email": "bob@else.org"}}`, 200,
			`{"key":"beta","reason":"DEFAULT","variant":"off","value":false,"metadata":{"flagSetId":"shop","version":"7"}}`},
		{"integer", "POST", "/ofrep/v1/evaluate/flags/limit", user, 200,
			`{"key":"limit","reason":"STATIC","variant":"low","value":10,"metadata":{"flagSetId":"shop","version":"7"}}`},
		{"object", "POST", "/ofrep/v1/evaluate/flags/layout", "", 200,
			`{"key":"layout","reason":"STATIC","variant":"a","value":{"cols":2,"tags":["x"]},"metadata":{"flagSetId":"shop","version":"7"}}`},
		{"disabled: the code default", "POST", "/ofrep/v1/evaluate/flags/off", user, 200,
			`{"key":"off","reason":"DISABLED","metadata":{"flagSetId":"shop","version":"7"}}`},
		{"no default variant: the code default", "POST", "/ofrep/v1/evaluate/flags/nodefault", user, 200,
			`{"key":"nodefault","reason":"DEFAULT","metadata":{"flagSetId":"shop","version":"7"}}`},
		{"broken flag", "POST", "/ofrep/v1/evaluate/flags/broken", user, 400,
			`{"key":"broken","errorCode":"PARSE_ERROR","errorDetails":`},
		{"rule names no variant", "POST", "/ofrep/v1/evaluate/flags/wrong", user, 400,
			`{"key":"wrong","errorCode":"GENERAL","errorDetails":`},
		{"missing flag", "POST", "/ofrep/v1/evaluate/flags/nope", user, 404,
			`{"key":"nope","errorCode":"FLAG_NOT_FOUND","errorDetails":`},
		{"not JSON", "POST", "/ofrep/v1/evaluate/flags/color", `{"context":`, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"the request body is not a JSON object`},
		{"context not an object", "POST", "/ofrep/v1/evaluate/flags/color", `{"context": [1]}`, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"context must be a JSON object`},
		{"targetingKey not a string", "POST", "/ofrep/v1/evaluate/flags/color", `{"context": {"targetingKey": 5}}`, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"targetingKey must be a string, not a number"}`},
		{"targetingKey null", "POST", "/ofrep/v1/evaluate/flags/color", `{"context": {"targetingKey": null}}`, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"targetingKey must be a string, not null"}`},
		{"targetingKey a boolean", "POST", "/ofrep/v1/evaluate/flags/color", `{"context": {"targetingKey": true}}`, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"targetingKey must be a string, not a boolean"}`},
		{"targetingKey an object", "POST", "/ofrep/v1/evaluate/flags/color", `{"context": {"targetingKey": {}}}`, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"targetingKey must be a string, not an object"}`},
		{"targetingKey an array", "POST", "/ofrep/v1/evaluate/flags/color", `{"context": {"targetingKey": []}}`, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"targetingKey must be a string, not an array"}`},
		{"too deep", "POST", "/ofrep/v1/evaluate/flags/color", deep, 400,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"the request nests 35 levels deep, over the limit of 32"}`},
		{"too large", "POST", "/ofrep/v1/evaluate/flags/color", `{"context": {"a": "` + strings.Repeat("x", 2<<20) + `"}}`, 413,
			`{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"the request body is over 1048576 bytes"}`},
		{"GET", "GET", "/ofrep/v1/evaluate/flags/color", "", 405,
			`{"errorCode":"GENERAL","errorDetails":"method GET not allowed here: use POST"}`},
		{"unknown path", "POST", "/ofrep/v2/flags", "", 404, `{"errorCode":"GENERAL","errorDetails":"no OFREP endpoint at /ofrep/v2/flags`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, srv, tt.method, tt.path, tt.body)
			if resp.StatusCode != tt.status || !strings.HasPrefix(body, tt.want) {
				t.Errorf("%d %s\nwant %d %s", resp.StatusCode, body, tt.status, tt.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.status == 405 && resp.Header.Get("Allow") != "POST, OPTIONS" {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}
}

// ofrepBulk is the bulk answer's body as OFREP defines it.
type ofrepBulk struct {
	Flags []struct {
		Key          string         `json:"key"`
		Value        any            `json:"value"`
		Variant      string         `json:"variant"`
		Reason       string         `json:"reason"`
		ErrorCode    string         `json:"errorCode"`
		ErrorDetails string         `json:"errorDetails"`
		Metadata     map[string]any `json:"metadata"`
	} `json:"flags"`
	Metadata     map[string]any `json:"metadata"`
	EventStreams []struct {
		Type     string `json:"type"`
		Endpoint struct {
			RequestURI string `json:"requestUri"`
		} `json:"endpoint"`
		InactivityDelaySec int `json:"inactivityDelaySec"`
	} `json:"eventStreams"`
}

func TestOFREPBulkAnswersAsEvaluateAll(t *testing.T) {
	srv, p, _ := ofrepServer(t, ofrepFlags)
	ctx := map[string]any{"targetingKey": "u1", "email": "ann@example.com"}
	resp, body := post(t, srv, "POST", "/ofrep/v1/evaluate/flags", `{"context": {"targetingKey": "u1", "email": "ann@example.com"}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var got ofrepBulk
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	all, err := p.EvaluateAll(context.Background(), ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Flags) != len(all.Flags) || len(all.Flags) != 9 {
		t.Fatalf("%d flags over OFREP, %d from EvaluateAll", len(got.Flags), len(all.Flags))
	}
	for i, f := range all.Flags {
		g := got.Flags[i]
		want := fmt.Sprint(f.Key, f.Variant, f.ErrorCode, f.FlagMetadata)
		if have := fmt.Sprint(g.Key, g.Variant, g.ErrorCode, g.Metadata); have != want {
			t.Errorf("flag %d: %s over OFREP, %s from EvaluateAll", i, have, want)
		}
		if f.ErrorCode == "" && g.Reason != string(f.Reason) || f.ErrorCode != "" && g.ErrorDetails != f.ErrorMessage {
			t.Errorf("%s: reason %q details %q, want %q %q", f.Key, g.Reason, g.ErrorDetails, f.Reason, f.ErrorMessage)
		}
		if fmt.Sprint(g.Value) != fmt.Sprint(f.Value) {
			t.Errorf("%s: value %v, want %v", f.Key, g.Value, f.Value)
		}
	}
	if fmt.Sprint(got.Metadata) != "map[flagSetId:shop version:7]" {
		t.Errorf("metadata %v", got.Metadata)
	}
	if len(got.EventStreams) != 1 || got.EventStreams[0].Type != "sse" || got.EventStreams[0].Endpoint.RequestURI != "/ofrep/v1/events" || got.EventStreams[0].InactivityDelaySec != 120 {
		t.Errorf("eventStreams %+v", got.EventStreams)
	}
}

func TestOFREPBulkETag(t *testing.T) {
	srv, _, m := ofrepServer(t, ofrepFlags)
	ann := `{"context": {"email": "ann@example.com"}}`
	resp, _ := post(t, srv, "POST", "/ofrep/v1/evaluate/flags", ann)
	tag := resp.Header.Get("ETag")
	if !strings.HasPrefix(tag, `"`) || len(tag) != 34 {
		t.Fatalf("ETag %q, want a strong tag", tag)
	}
	// The same answer has the same tag; the answer for a context it does
	// not change has it too; another answer has another.
	if again, _ := post(t, srv, "POST", "/ofrep/v1/evaluate/flags", ann); again.Header.Get("ETag") != tag {
		t.Errorf("the same request got %q, then %q", tag, again.Header.Get("ETag"))
	}
	if other, _ := post(t, srv, "POST", "/ofrep/v1/evaluate/flags", `{"context": {"email": "ann@example.com", "plan": "free"}}`); other.Header.Get("ETag") != tag {
		t.Errorf("a context with the same answers got %q, not %q", other.Header.Get("ETag"), tag)
	}
	if other, _ := post(t, srv, "POST", "/ofrep/v1/evaluate/flags", `{"context": {"email": "bob@else.org"}}`); other.Header.Get("ETag") == tag {
		t.Errorf("a context with other answers got the same tag %q", tag)
	}
	if nm, body := post(t, srv, "POST", "/ofrep/v1/evaluate/flags", ann, "If-None-Match", tag); nm.StatusCode != 304 || body != "" {
		t.Errorf("If-None-Match: %d %q", nm.StatusCode, body)
	}
	if err := m.Set([]byte(strings.Replace(ofrepFlags, `"defaultVariant": "red"`, `"defaultVariant": "blue"`, 1))); err != nil {
		t.Fatal(err)
	}
	if changed, _ := post(t, srv, "POST", "/ofrep/v1/evaluate/flags", ann, "If-None-Match", tag); changed.StatusCode != 200 || changed.Header.Get("ETag") == tag {
		t.Errorf("after a change: %d with tag %q", changed.StatusCode, changed.Header.Get("ETag"))
	}
}

func TestOFREPNotReady(t *testing.T) {
	p, err := NewProvider(WithoutEnv(), WithSource(newFakeSource()))
	if err != nil {
		t.Fatal(err)
	}
	h := OFREPHandler(p)
	for _, path := range []string{"/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/color"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(`{}`)))
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), `"errorCode":"PROVIDER_NOT_READY"`) || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}

func TestOFREPInvalidOptions(t *testing.T) {
	p, err := NewProvider(WithoutEnv(), WithSource(newFakeSource()))
	if err != nil {
		t.Fatal(err)
	}
	h := OFREPHandler(p, WithOFREPAllowOrigins("shop.example.com"), WithOFREPMaxStreams(0), WithOFREPMaxBodySize(-1),
		WithOFREPHeartbeat(0), WithOFREPContextFromHeader("X-User Id", "userId"), WithOFREPContextValue("", 1))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/ofrep/v1/evaluate/flags", nil))
	want := `{"errorCode":"GENERAL","errorDetails":"flagsnap: OFREPHandler: WithOFREPAllowOrigins: \"shop.example.com\" is not an origin such as https://app.example.com, nor *; WithOFREPMaxStreams: 0 is not positive; WithOFREPMaxBodySize: -1 is not positive; WithOFREPHeartbeat: 0s is not positive; WithOFREPContextFromHeader: want a header name and an attribute, got \"X-User Id\" and \"userId\"; WithOFREPContextValue: empty attribute"}`
	if rec.Code != 500 || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

func TestOFREPMaxBodySize(t *testing.T) {
	srv, _, _ := ofrepServer(t, ofrepFlags, WithOFREPMaxBodySize(64))
	small := `{"context": {"targetingKey": "u1"}}`
	large := `{"context": {"targetingKey": "u1", "note": "` + strings.Repeat("x", 64) + `"}}`
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"under the bound", small, 200, `{"key":"color","reason":"STATIC","variant":"red"`},
		{"over the bound", large, 413, `{"key":"color","errorCode":"INVALID_CONTEXT","errorDetails":"the request body is over 64 bytes"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, got := post(t, srv, "POST", "/ofrep/v1/evaluate/flags/color", tt.body)
			if resp.StatusCode != tt.status || !strings.HasPrefix(strings.TrimSpace(got), tt.want) {
				t.Errorf("%d %s, want %d %s", resp.StatusCode, got, tt.status, tt.want)
			}
		})
	}
}

func TestOFREPCORS(t *testing.T) {
	srv, _, _ := ofrepServer(t, ofrepFlags, WithOFREPAllowOrigins("https://shop.example.com"), WithOFREPContextFromHeader("X-User", "targetingKey"))
	tests := []struct {
		name, method, origin string
		headers              []string
		status               int
		allowOrigin          string
	}{
		{"preflight from an allowed origin", "OPTIONS", "https://shop.example.com",
			[]string{"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type,if-none-match"}, 204, "https://shop.example.com"},
		{"preflight from another origin", "OPTIONS", "https://evil.example.com",
			[]string{"Access-Control-Request-Method", "POST"}, 403, ""},
		{"request from an allowed origin", "POST", "https://shop.example.com", nil, 200, "https://shop.example.com"},
		{"request from another origin", "POST", "https://evil.example.com", nil, 200, ""},
		{"request without an origin", "POST", "", nil, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := append([]string{"Origin", tt.origin}, tt.headers...)
			resp, body := post(t, srv, tt.method, "/ofrep/v1/evaluate/flags", `{"context": {}}`, h...)
			if resp.StatusCode != tt.status || resp.Header.Get("Access-Control-Allow-Origin") != tt.allowOrigin {
				t.Errorf("%d, Access-Control-Allow-Origin %q: %s", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), body)
			}
			if tt.allowOrigin != "" && resp.Header.Get("Access-Control-Expose-Headers") != "ETag" {
				t.Errorf("Access-Control-Expose-Headers %q", resp.Header.Get("Access-Control-Expose-Headers"))
			}
			if tt.status == 204 {
				if got := resp.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(got, "If-None-Match") || !strings.Contains(got, "X-User") {
					t.Errorf("Access-Control-Allow-Headers %q", got)
				}
				if got := resp.Header.Get("Access-Control-Allow-Methods"); got != "POST, GET, OPTIONS" {
					t.Errorf("Access-Control-Allow-Methods %q", got)
				}
			}
		})
	}
}

func TestOFREPContextFromHeadersAndStaticValues(t *testing.T) {
	doc := `{"flags": {"who": {"state": "ENABLED", "variants": {"staff": "staff", "user": "user", "prod": "prod"}, "defaultVariant": "user",
	  "targeting": {"if": [{"==": [{"var": "env"}, "test"]}, "prod", {"ends_with": [{"var": "email"}, "@corp.example"]}, "staff", null]}}}}`
	srv, _, _ := ofrepServer(t, doc, WithOFREPContextFromHeader("x-user-email", "email"), WithOFREPContextValue("env", "prod"),
		WithOFREPContextFromHeader("X-Env", "env"))
	tests := []struct {
		name, body string
		headers    []string
		want       string
	}{
		{"from the body", `{"context": {"email": "a@corp.example"}}`, nil, "staff"},
		{"the header wins over the body", `{"context": {"email": "a@corp.example"}}`, []string{"X-User-Email", "b@other.example"}, "user"},
		{"from the header alone", `{}`, []string{"X-User-Email", "b@corp.example"}, "staff"},
		{"the static value wins over the body", `{"context": {"env": "test"}}`, nil, "user"},
		{"a mapped header wins over the static value", `{}`, []string{"X-Env", "test"}, "prod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body := post(t, srv, "POST", "/ofrep/v1/evaluate/flags/who", tt.body, tt.headers...)
			if !strings.Contains(body, `"variant":"`+tt.want+`"`) {
				t.Errorf("%s, want variant %s", body, tt.want)
			}
		})
	}
}

func TestOFREPFlagSets(t *testing.T) {
	keys := func(body string) string {
		var b ofrepBulk
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var k []string
		for _, f := range b.Flags {
			k = append(k, f.Key)
		}
		return strings.Join(k, ",")
	}
	all, _, _ := ofrepServer(t, ofrepFlags)
	shop, _, _ := ofrepServer(t, ofrepFlags, WithOFREPFlagSets("shop"))
	const shopKeys = "beta,broken,color,layout,limit,nodefault,off"
	tests := []struct {
		name     string
		srv      *httptest.Server
		selector string
		status   int
		want     string
	}{
		{"every flag", all, "", 200, "admin-only,beta,broken,color,layout,limit,nodefault,off,wrong"},
		{"a selector", all, "flagSetId=admin", 200, "admin-only,wrong"},
		{"the handler's sets", shop, "", 200, shopKeys},
		{"a selector within them", shop, "flagSetId=shop", 200, shopKeys},
		{"a selector outside them", shop, "flagSetId=admin", 403, ""},
		{"a selector of another kind", all, "source=flags.json", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, tt.srv, "POST", "/ofrep/v1/evaluate/flags", `{}`, "Flagd-Selector", tt.selector)
			if resp.StatusCode != tt.status {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if tt.status == 200 && keys(body) != tt.want {
				t.Errorf("flags %s, want %s", keys(body), tt.want)
			}
		})
	}
	// A flag of a set the handler does not serve is not found.
	if resp, body := post(t, shop, "POST", "/ofrep/v1/evaluate/flags/admin-only", `{}`); resp.StatusCode != 404 || !strings.Contains(body, "FLAG_NOT_FOUND") {
		t.Errorf("admin-only from the shop's handler: %d %s", resp.StatusCode, body)
	}
}

// sseReader reads a stream's events and comments, each within a bound.
type sseReader struct {
	t     *testing.T
	lines chan string
}

func openEvents(t *testing.T, srv *httptest.Server, headers ...string) (*http.Response, *sseReader) {
	t.Helper()
	resp := send(t, srv, "GET", "/ofrep/v1/events", "", headers...)
	t.Cleanup(func() { resp.Body.Close() })
	r := &sseReader{t: t, lines: make(chan string, 100)}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(resp.Body)
		var block []string
		for sc.Scan() {
			if sc.Text() != "" {
				block = append(block, sc.Text())
				continue
			}
			r.lines <- strings.Join(block, "\n")
			block = nil
		}
	}()
	return resp, r
}

// next is the next block (an event or a comment); "" when the stream ended.
func (r *sseReader) next(within time.Duration) string {
	r.t.Helper()
	select {
	case b := <-r.lines:
		return b
	case <-time.After(within):
		r.t.Fatalf("nothing on the stream within %v", within)
		return ""
	}
}

// nextEvent skips comments to the next event.
func (r *sseReader) nextEvent(within time.Duration) string {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		b := r.next(time.Until(deadline))
		if !strings.HasPrefix(b, ":") {
			return b
		}
	}
}

func TestOFREPEvents(t *testing.T) {
	srv, p, m := ofrepServer(t, ofrepFlags, WithOFREPHeartbeat(50*time.Millisecond))
	resp, ev := openEvents(t, srv)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if c := ev.next(time.Second); !strings.HasPrefix(c, ":") {
		t.Fatalf("first block %q, want a comment", c)
	}
	if c := ev.next(time.Second); c != ": heartbeat" {
		t.Errorf("block %q, want a heartbeat", c)
	}
	// One event per change, named by the snapshot.
	var ids []string
	for _, variant := range []string{"blue", "red"} {
		if err := m.Set([]byte(strings.Replace(ofrepFlags, `"defaultVariant": "red"`, `"defaultVariant": "`+variant+`"`, 1))); err != nil {
			t.Fatal(err)
		}
		e := ev.nextEvent(2 * time.Second)
		id := p.eventID(p.snap.Load())
		want := "id: " + id + "\nevent: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"" + id + "\"}"
		if e != want {
			t.Errorf("event %q, want %q", e, want)
		}
		ids = append(ids, id)
	}
	if ids[0] == ids[1] {
		t.Errorf("two changes with the same id %s", ids[0])
	}
	// A client back with the last id hears of nothing; one back with an
	// older id hears of the change it missed, at once.
	_, same := openEvents(t, srv, "Last-Event-ID", ids[1])
	if b := same.next(time.Second); !strings.HasPrefix(b, ":") {
		t.Errorf("%q, want the opening comment", b)
	}
	if b := same.next(time.Second); b != ": heartbeat" {
		t.Errorf("up to date client got %q", b)
	}
	_, behind := openEvents(t, srv, "Last-Event-ID", ids[0])
	if e := behind.nextEvent(time.Second); !strings.HasPrefix(e, "id: "+ids[1]+"\n") {
		t.Errorf("client behind got %q", e)
	}
	// Shutdown ends every stream.
	p.Shutdown()
	for _, r := range []*sseReader{ev, same, behind} {
		deadline := time.Now().Add(2 * time.Second)
		for b := r.next(time.Until(deadline)); b != ""; b = r.next(time.Until(deadline)) {
		}
	}
}

// A stream outlives the server's WriteTimeout, which ends ordinary
// answers that take longer: the stream's writes set deadlines of their own.
func TestOFREPEventsOutliveWriteTimeout(t *testing.T) {
	m := source.NewMemory([]byte(ofrepFlags))
	p, err := NewProvider(WithoutEnv(), WithSource(m))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(OFREPHandler(p, WithOFREPHeartbeat(50*time.Millisecond)))
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	defer srv.Close()
	defer p.Shutdown()
	_, ev := openEvents(t, srv)
	start := time.Now()
	for time.Since(start) < time.Second {
		if b := ev.next(time.Second); b == "" {
			t.Fatalf("the stream ended after %v", time.Since(start))
		}
	}
	if err := m.Set([]byte(strings.Replace(ofrepFlags, `"defaultVariant": "red"`, `"defaultVariant": "blue"`, 1))); err != nil {
		t.Fatal(err)
	}
	if e := ev.nextEvent(time.Second); !strings.Contains(e, "refetchEvaluation") {
		t.Errorf("after 1s, %q", e)
	}
}

func TestOFREPEventStreamsBound(t *testing.T) {
	srv, _, _ := ofrepServer(t, ofrepFlags, WithOFREPMaxStreams(2))
	for range 2 {
		_, ev := openEvents(t, srv)
		ev.next(time.Second)
	}
	resp, body := post(t, srv, "GET", "/ofrep/v1/events", "")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "2 event streams are open") {
		t.Errorf("a third stream: %d %s", resp.StatusCode, body)
	}
}

func TestOFREPRequestsNeverChangeTheFlags(t *testing.T) {
	srv, p, _ := ofrepServer(t, ofrepFlags)
	before := p.flags()
	for _, body := range []string{`{"context": {"$flagd": {"flagKey": "x"}, "targetingKey": "a"}}`, `{"flags": {}}`, `{"context": {"__proto__": {}}}`} {
		post(t, srv, "POST", "/ofrep/v1/evaluate/flags", body)
		post(t, srv, "PUT", "/ofrep/v1/evaluate/flags/color", body)
		post(t, srv, "DELETE", "/ofrep/v1/evaluate/flags", body)
	}
	if p.flags() != before {
		t.Error("a request replaced the flags")
	}
}
