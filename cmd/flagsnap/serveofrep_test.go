package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/logtest"
)

// ofrepFlags has a flag of each type, targeting on the request's context,
// on a --context-value and on a header, a fractional split and a disabled
// flag. %s is the color's default variant, which the tests change.
const ofrepFlags = `{"flags": {
  "color": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "%s"},
  "pro": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
    "targeting": {"if": [{"==": [{"var": "plan"}, "pro"]}, "on"]}},
  "limit": {"state": "ENABLED", "variants": {"low": 10, "high": 1000}, "defaultVariant": "low",
    "targeting": {"fractional": [["low", 50], ["high", 50]]}},
  "ratio": {"state": "ENABLED", "variants": {"half": 0.5, "all": 1.0}, "defaultVariant": "half"},
  "theme": {"state": "ENABLED", "variants": {"dark": {"bg": "black", "fg": ["white", "grey"]}}, "defaultVariant": "dark"},
  "region": {"state": "ENABLED", "variants": {"eu": "eu", "other": "other"}, "defaultVariant": "other",
    "targeting": {"if": [{"==": [{"var": "region"}, "eu"]}, "eu"]}},
  "tier": {"state": "ENABLED", "variants": {"gold": "gold", "basic": "basic"}, "defaultVariant": "basic",
    "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "gold"]}},
  "retired": {"state": "DISABLED", "variants": {"a": "a"}, "defaultVariant": "a"}
}}`

func ofrepDoc(color string) string { return strings.Replace(ofrepFlags, "%s", color, 1) }

// ofrepKinds is the type of each flag of ofrepFlags, for the typed
// evaluation of the in-process provider the answers are checked against.
var ofrepKinds = map[string]string{
	"color": "string", "pro": "bool", "limit": "int", "ratio": "float", "theme": "object",
	"region": "string", "tier": "string", "retired": "string",
}

// ofrepFlag is one flag of an OFREP answer, or a single flag's answer.
type ofrepFlag struct {
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value"`
	Reason       string          `json:"reason"`
	Variant      string          `json:"variant"`
	ErrorCode    string          `json:"errorCode"`
	ErrorDetails string          `json:"errorDetails"`
}

// ofrepBulk is the answer of a bulk evaluation.
type ofrepBulk struct {
	Flags        []ofrepFlag `json:"flags"`
	EventStreams []struct {
		Type     string `json:"type"`
		Endpoint struct {
			RequestURI string `json:"requestUri"`
		} `json:"endpoint"`
	} `json:"eventStreams"`
}

var ofrepLine = regexp.MustCompile(`serving \S+ over OFREP on (http://\S+)/ofrep/v1/\n`)

// ofrepBase waits for serve to say where it answers OFREP, and returns the
// address's root, without the path.
func (r *serveRun) ofrepBase(t *testing.T) string {
	t.Helper()
	var base string
	waitFor(t, "the OFREP address", func() bool {
		m := ofrepLine.FindStringSubmatch(r.stdout.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	return base
}

// startOFREP serves a flag file with the color's default variant red,
// with --http and args, and returns the file, the run and the root of the
// HTTP address.
func startOFREP(t *testing.T, args ...string) (path string, r *serveRun, base string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, path, ofrepDoc("red"))
	r = startServe(t, append([]string{path, "--addr", "127.0.0.1:0", "--http", "127.0.0.1:0"}, args...)...)
	return path, r, r.ofrepBase(t)
}

// ofrepPost posts an evaluation request with ctx as its context.
func ofrepPost(t *testing.T, c *http.Client, url string, ctx map[string]any, headers ...string) (*http.Response, []byte) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"context": ctx})
	if err != nil {
		t.Fatal(err)
	}
	return httpRequest(t, c, http.MethodPost, url, body, append([]string{"Content-Type: application/json"}, headers...)...)
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	return v
}

// fileProvider evaluates path in process, as the answers should.
func fileProvider(t *testing.T, path string) *flagsnap.Provider {
	t.Helper()
	p, err := flagsnap.NewProvider(flagsnap.WithoutEnv(), flagsnap.WithFile(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return p
}

// localEval is what the in-process provider resolves key to.
func localEval(p *flagsnap.Provider, key string, ctx openfeature.FlattenedContext) (any, string, openfeature.Reason) {
	bg := context.Background()
	switch ofrepKinds[key] {
	case "bool":
		d := p.BooleanEvaluation(bg, key, false, ctx)
		return d.Value, d.Variant, d.Reason
	case "int":
		d := p.IntEvaluation(bg, key, 0, ctx)
		return d.Value, d.Variant, d.Reason
	case "float":
		d := p.FloatEvaluation(bg, key, 0, ctx)
		return d.Value, d.Variant, d.Reason
	case "object":
		d := p.ObjectEvaluation(bg, key, nil, ctx)
		return d.Value, d.Variant, d.Reason
	}
	d := p.StringEvaluation(bg, key, "", ctx)
	return d.Value, d.Variant, d.Reason
}

// sameJSON tells whether a value read from an answer is v, compared as
// JSON (sameValue).
func sameJSON(t *testing.T, raw json.RawMessage, v any) bool {
	t.Helper()
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("value %s: %v", raw, err)
	}
	return sameValue(t, got, v)
}

// sameValue compares two values as JSON, so that 10 and int64(10), or
// keys in another order, are equal.
func sameValue(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("values %v, %v: %v %v", a, b, err1, err2)
	}
	return bytes.Equal(ja, jb)
}

// checkAgainst checks an answer's flag against the in-process provider's
// resolution for ctx. A disabled flag has no value to give: its answer has
// none.
func checkAgainst(t *testing.T, p *flagsnap.Provider, got ofrepFlag, ctx map[string]any) {
	t.Helper()
	value, variant, reason := localEval(p, got.Key, ctx)
	if got.ErrorCode != "" || got.Reason != string(reason) || got.Variant != variant {
		t.Errorf("%s: reason %q variant %q error %q %s, want %s %q", got.Key, got.Reason, got.Variant, got.ErrorCode, got.ErrorDetails, reason, variant)
	}
	switch {
	case reason == openfeature.DisabledReason:
		if got.Value != nil {
			t.Errorf("%s: disabled, yet value %s", got.Key, got.Value)
		}
	case got.Value == nil:
		t.Errorf("%s: no value, want %v", got.Key, value)
	case !sameJSON(t, got.Value, value):
		t.Errorf("%s: value %s, want %v", got.Key, got.Value, value)
	}
}

// flagsnap serve --http answers OFREP as an in-process provider reading
// the same file resolves, one flag or all, with the request's context,
// --context-value and the headers of --context-from-header.
func TestServeOFREPEvaluates(t *testing.T) {
	path, r, base := startOFREP(t, "--context-value", "region=eu", "--context-from-header", "X-Tier=tier")
	local := fileProvider(t, path)
	c := httpClient(t)
	tests := []struct {
		name    string
		ctx     map[string]any
		headers []string
		local   map[string]any // added to ctx for the in-process provider
	}{
		{name: "empty context", ctx: map[string]any{}},
		{name: "a pro user", ctx: map[string]any{"targetingKey": "user-1", "plan": "pro"}},
		{name: "another user", ctx: map[string]any{"targetingKey": "user-2", "plan": "free"}},
		{name: "tier from the header", ctx: map[string]any{"targetingKey": "user-3"}, headers: []string{"X-Tier: gold"}, local: map[string]any{"tier": "gold"}},
		{name: "header name in lower case", ctx: map[string]any{}, headers: []string{"x-tier: gold"}, local: map[string]any{"tier": "gold"}},
		{name: "another tier", ctx: map[string]any{}, headers: []string{"X-Tier: silver"}, local: map[string]any{"tier": "silver"}},
	}
	keys := slices.Sorted(maps.Keys(ofrepKinds))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := map[string]any{"region": "eu"} // --context-value
			maps.Copy(want, tt.ctx)
			maps.Copy(want, tt.local)

			resp, body := ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags", tt.ctx, tt.headers...)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
				t.Fatalf("bulk: %d, ETag %q: %s", resp.StatusCode, resp.Header.Get("ETag"), body)
			}
			bulk := decode[ofrepBulk](t, body)
			var got []string
			for _, f := range bulk.Flags {
				got = append(got, f.Key)
				checkAgainst(t, local, f, want)
			}
			if !slices.Equal(got, keys) {
				t.Errorf("bulk: flags %v, want %v", got, keys)
			}

			for _, key := range keys {
				resp, body := ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags/"+key, tt.ctx, tt.headers...)
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s: %d %s", key, resp.StatusCode, body)
					continue
				}
				checkAgainst(t, local, decode[ofrepFlag](t, body), want)
			}
		})
	}

	resp, body := ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags/missing", map[string]any{})
	if f := decode[ofrepFlag](t, body); resp.StatusCode != http.StatusNotFound || f.ErrorCode != "FLAG_NOT_FOUND" {
		t.Errorf("a missing flag: %d %s", resp.StatusCode, body)
	}
	// /flags.json is served beside OFREP, as before.
	if resp, body := httpGet(t, c, "GET", base+flagsPath); resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"retired"`)) {
		t.Errorf("/flags.json: %d %s", resp.StatusCode, body)
	}
	if code := r.stop(); code != exitOK {
		t.Errorf("serve ended with %d: %s", code, r.stderr)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event, data string
}

// sseStream reads the events of one GET /ofrep/v1/events.
type sseStream struct {
	events chan sseEvent
	done   chan struct{} // closed when the stream has ended
	err    error         // why it ended, nil at a clean end; read after done
}

// openEvents opens an event stream, checks its status and reads it in the
// background until it ends or the test does.
func openEvents(t *testing.T, url string, headers ...string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ": ")
		req.Header.Add(k, v)
	}
	// The stream lasts for as long as the test wants: no client timeout,
	// but each wait below is bounded.
	tr := &http.Transport{ResponseHeaderTimeout: wait}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &sseStream{events: make(chan sseEvent, 16), done: make(chan struct{})}
	go s.read(resp.Body)
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(wait):
			t.Error("the event stream's reader did not end")
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
	})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return s
}

// read parses the stream: fields until an empty line, which ends an
// event; comments (the heartbeats) are skipped.
func (s *sseStream) read(body io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			if line == "" && ev != (sseEvent{}) {
				s.events <- ev
				ev = sseEvent{}
			}
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			ev.data += value
		}
	}
	s.err = sc.Err()
}

// next waits for the next event, failing if the stream ends first.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		// An event sent just before the end is still to be read.
		select {
		case ev := <-s.events:
			return ev
		default:
		}
		t.Fatalf("the event stream ended (%v)", s.err)
	case <-time.After(wait):
		t.Fatal("no event")
	}
	return sseEvent{}
}

// none checks that no event comes for d.
func (s *sseStream) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev := <-s.events:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(d):
	}
}

// wantRefetch checks that ev asks OFREP clients to evaluate again.
func wantRefetch(t *testing.T, ev sseEvent) {
	t.Helper()
	var data struct {
		Type string `json:"type"`
		ETag string `json:"etag"`
	}
	if err := json.Unmarshal([]byte(ev.data), &data); err != nil || ev.event != "message" || data.Type != "refetchEvaluation" || ev.id == "" {
		t.Errorf("event %+v (%v), want a refetchEvaluation message with an id", ev, err)
	}
}

// A change of the file reaches OFREP's answers, with a new ETag, and an
// event on every stream; a change that does not load reaches neither.
func TestServeOFREPFollowsChanges(t *testing.T) {
	path, r, base := startOFREP(t)
	c := httpClient(t)
	bulkURL := base + "/ofrep/v1/evaluate/flags"
	resp, body := ofrepPost(t, c, bulkURL, map[string]any{})
	bulk := decode[ofrepBulk](t, body)
	etag := resp.Header.Get("ETag")
	if len(bulk.EventStreams) != 1 || bulk.EventStreams[0].Type != "sse" {
		t.Fatalf("event streams %+v", bulk.EventStreams)
	}
	events := openEvents(t, base+bulk.EventStreams[0].Endpoint.RequestURI)
	if resp, _ := ofrepPost(t, c, bulkURL, map[string]any{}, "If-None-Match: "+etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match the current ETag: %d", resp.StatusCode)
	}

	writeFile(t, path, ofrepDoc("blue"))
	wantRefetch(t, events.next(t))
	resp, body = ofrepPost(t, c, bulkURL, map[string]any{}, "If-None-Match: "+etag)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == etag {
		t.Errorf("after the change, If-None-Match the old ETag: %d, ETag %s", resp.StatusCode, resp.Header.Get("ETag"))
	}
	for _, f := range decode[ofrepBulk](t, body).Flags {
		if f.Key == "color" && string(f.Value) != `"blue"` {
			t.Errorf("bulk after the change: color %s", f.Value)
		}
	}
	_, body = ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags/color", map[string]any{})
	if f := decode[ofrepFlag](t, body); string(f.Value) != `"blue"` {
		t.Errorf("color after the change: %s", body)
	}

	writeFile(t, path, `{"flags": {`)
	waitFor(t, "the bad change reported", func() bool { return strings.Contains(r.stdout.String(), path+": not sent: invalid JSON") })
	events.none(t, 200*time.Millisecond)
	_, body = ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags/color", map[string]any{})
	if f := decode[ofrepFlag](t, body); string(f.Value) != `"blue"` {
		t.Errorf("color after a change that does not load: %s", body)
	}
}

// With --selector-dir, OFREP evaluates what a stream without a selector is
// sent: the later file's flag where two define it. A change that leaves
// that selection as it was is no change to OFREP's clients.
func TestServeOFREPFollowsSelectorDir(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flags.json")
	writeFile(t, path, ofrepDoc("red"))
	teams := filepath.Join(dir, "teams")
	if err := os.Mkdir(teams, 0o700); err != nil {
		t.Fatal(err)
	}
	team := filepath.Join(teams, "checkout.json")
	override := `{"flags": {"color": {"state": "ENABLED", "variants": {"red": "red", "green": "green"}, "defaultVariant": "%s"}}}`
	writeFile(t, team, fmt.Sprintf(override, "green"))
	r := startServe(t, path, "--addr", "127.0.0.1:0", "--http", "127.0.0.1:0", "--selector-dir", teams)
	base := r.ofrepBase(t)
	c := httpClient(t)
	color := func() string {
		t.Helper()
		_, body := ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags/color", map[string]any{})
		return string(decode[ofrepFlag](t, body).Value)
	}
	if got := color(); got != `"green"` {
		t.Errorf("color %s, want the later file's green", got)
	}
	events := openEvents(t, base+"/ofrep/v1/events")

	writeFile(t, path, ofrepDoc("blue"))
	waitFor(t, "the change sent", func() bool { return strings.Contains(r.stdout.String(), path+": sent") })
	events.none(t, 200*time.Millisecond)
	if got := color(); got != `"green"` {
		t.Errorf("color %s after a change of the overridden flag, want green", got)
	}

	writeFile(t, team, fmt.Sprintf(override, "red"))
	wantRefetch(t, events.next(t))
	if got := color(); got != `"red"` {
		t.Errorf("color %s after the later file changed, want red", got)
	}
}

// --allow-origin lets the origins named call OFREP from a browser: a
// preflight is answered for them, and for no other origin.
func TestServeOFREPAllowOrigin(t *testing.T) {
	const app = "https://app.example.com"
	preflight := []string{"Access-Control-Request-Method: POST", "Access-Control-Request-Headers: content-type, x-tier"}
	tests := []struct {
		name      string
		args      []string
		origin    string
		allowed   []string // Access-Control-Allow-Origin values accepted; none when empty
		withTiers bool     // the mapped header is among the allowed ones
	}{
		{name: "origin named", args: []string{"--allow-origin", app, "--context-from-header", "X-Tier=tier"}, origin: app, allowed: []string{app}, withTiers: true},
		{name: "another origin", args: []string{"--allow-origin", app}, origin: "https://evil.example.com"},
		{name: "any origin", args: []string{"--allow-origin", "*"}, origin: "https://other.example.com", allowed: []string{"*", "https://other.example.com"}},
		{name: "no option", origin: app},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r, base := startOFREP(t, tt.args...)
			c := httpClient(t)
			resp, body := httpGet(t, c, http.MethodOptions, base+"/ofrep/v1/evaluate/flags", append([]string{"Origin: " + tt.origin}, preflight...)...)
			got := resp.Header.Get("Access-Control-Allow-Origin")
			if len(tt.allowed) == 0 {
				if got != "" {
					t.Errorf("preflight: Access-Control-Allow-Origin %q, want none", got)
				}
			} else {
				if resp.StatusCode/100 != 2 || !slices.Contains(tt.allowed, got) {
					t.Errorf("preflight: %d, Access-Control-Allow-Origin %q, want one of %q: %s", resp.StatusCode, got, tt.allowed, body)
				}
				methods := strings.ToUpper(resp.Header.Get("Access-Control-Allow-Methods"))
				if !strings.Contains(methods, "POST") {
					t.Errorf("preflight: Access-Control-Allow-Methods %q", methods)
				}
				headers := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
				if !strings.Contains(headers, "content-type") || tt.withTiers != strings.Contains(headers, "x-tier") {
					t.Errorf("preflight: Access-Control-Allow-Headers %q", headers)
				}
			}

			// The request that follows the preflight.
			resp, body = ofrepPost(t, c, base+"/ofrep/v1/evaluate/flags", map[string]any{}, "Origin: "+tt.origin)
			got = resp.Header.Get("Access-Control-Allow-Origin")
			switch {
			case resp.StatusCode != http.StatusOK:
				t.Errorf("POST: %d %s", resp.StatusCode, body)
			case len(tt.allowed) == 0 && got != "":
				t.Errorf("POST: Access-Control-Allow-Origin %q, want none", got)
			case len(tt.allowed) > 0 && (!slices.Contains(tt.allowed, got) || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "ETag")):
				t.Errorf("POST: Access-Control-Allow-Origin %q, Access-Control-Expose-Headers %q", got, resp.Header.Get("Access-Control-Expose-Headers"))
			}
			if code := r.stop(); code != exitOK {
				t.Errorf("serve ended with %d: %s", code, r.stderr)
			}
		})
	}
}

// An event stream outlives the server's write timeout, which would cut it
// if the stream did not lift it: here the timeout is a fraction of a
// second, and an event still comes well after it.
func TestServeOFREPStreamOutlivesWriteTimeout(t *testing.T) {
	old := httpWriteTimeout
	httpWriteTimeout = 200 * time.Millisecond
	t.Cleanup(func() { httpWriteTimeout = old })
	path, _, base := startOFREP(t)
	events := openEvents(t, base+"/ofrep/v1/events")

	// No event and no heartbeat in this time: a stream still bound by the
	// timeout fails its next write.
	events.none(t, 4*httpWriteTimeout)
	writeFile(t, path, ofrepDoc("blue"))
	wantRefetch(t, events.next(t))
	events.none(t, 2*httpWriteTimeout)
	writeFile(t, path, ofrepDoc("red"))
	wantRefetch(t, events.next(t))
}

// Stopping serve ends the event streams cleanly: the client reads the
// stream's end, not a broken connection, and serve stops at once.
func TestServeOFREPStreamsEndWithServe(t *testing.T) {
	_, r, base := startOFREP(t)
	streams := []*sseStream{openEvents(t, base+"/ofrep/v1/events"), openEvents(t, base+"/ofrep/v1/events")}
	start := time.Now()
	if code := r.stop(); code != exitOK {
		t.Errorf("serve ended with %d: %s", code, r.stderr)
	}
	// Without the streams ended, the server would wait them out until its
	// shutdown gives up.
	if d := time.Since(start); d >= httpShutdownWait {
		t.Errorf("serve took %v to stop", d)
	}
	for i, s := range streams {
		select {
		case <-s.done:
			if s.err != nil {
				t.Errorf("stream %d: %v, want a clean end", i, s.err)
			}
		case <-time.After(wait):
			t.Errorf("stream %d still open after serve stopped", i)
		}
	}
}

// OFREP's options are checked as the others are: a bad value stops serve
// before it serves, with one line saying what is wrong.
func TestServeOFREPBadInput(t *testing.T) {
	good := filepath.Join(t.TempDir(), "flags.json")
	writeFile(t, good, ofrepDoc("red"))
	withHTTP := []string{good, "--addr", "127.0.0.1:0", "--http", "127.0.0.1:0"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"header without attribute", []string{"--context-from-header", "X-Tier"}, `want HEADER=ATTRIBUTE, not "X-Tier"`},
		{"empty header", []string{"--context-from-header", "=tier"}, `want HEADER=ATTRIBUTE, not "=tier"`},
		{"empty attribute", []string{"--context-from-header", "X-Tier="}, `want HEADER=ATTRIBUTE, not "X-Tier="`},
		{"not a header name", []string{"--context-from-header", "X Tier=tier"}, `"X Tier" is not a header name`},
		{"header mapped twice", []string{"--context-from-header", "X-Tier=tier", "--context-from-header", "x-tier=level"}, "header X-Tier mapped twice"},
		{"origin with a path", []string{"--allow-origin", "https://app.example.com/app"}, `want * or an origin, scheme://host[:port] without a path, not "https://app.example.com/app"`},
		{"origin with a query", []string{"--allow-origin", "https://app.example.com?"}, "want * or an origin"},
		{"origin without a scheme", []string{"--allow-origin", "app.example.com"}, "want * or an origin"},
		{"empty origin", []string{"--allow-origin", ""}, "want * or an origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serveRefused(t, append(slices.Clone(withHTTP), tt.args...), tt.args[0], tt.want)
		})
	}
	for _, opt := range [][]string{{"--allow-origin", "*"}, {"--context-from-header", "X-Tier=tier"}} {
		t.Run(opt[0]+" without --http", func(t *testing.T) {
			serveRefused(t, append([]string{good, "--addr", "127.0.0.1:0"}, opt...), opt[0]+" needs --http")
		})
	}
}

// serveRefused runs serve with args and checks that it refuses them as
// bad input, saying every part of want on one line.
func serveRefused(t *testing.T, args []string, want ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	// Bad input must stop serve before it serves; if it ever serves, the
	// deadline ends it and the status says so.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	code := runContext(ctx, append([]string{"serve"}, args...), &out, &errOut)
	wantStatus(t, code, exitBadInput, out.String(), errOut.String())
	wantOneLine(t, errOut.String(), want...)
}

// The usage names the OFREP paths and options, with an example.
func TestServeOFREPUsage(t *testing.T) {
	stdout, _, code := runCmd(t, "serve", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"[--allow-origin ORIGIN]...", "[--context-from-header HEADER=ATTRIBUTE]...",
		"POST /ofrep/v1/evaluate/flags/KEY", "POST /ofrep/v1/evaluate/flags ", "GET  /ofrep/v1/events", "refetchEvaluation",
		"curl -H 'Content-Type: application/json'", "/ofrep/v1/evaluate/flags/new-checkout",
		"  --allow-origin ORIGIN", "  --context-from-header HEADER=ATTRIBUTE",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("usage does not say %q", want)
		}
	}
}

// scriptedDocs answers Document with the next of its versions, as a sync
// server read by watchers racing each other might appear to one of them.
type scriptedDocs struct {
	docs     []string
	versions []uint64
}

func (s *scriptedDocs) Document(string) (string, uint64, error) {
	doc, v := s.docs[0], s.versions[0]
	s.docs, s.versions = s.docs[1:], s.versions[1:]
	return doc, v, nil
}

func (s *scriptedDocs) Version() uint64 { return s.versions[0] }

// The follower hands the provider only versions newer than the last it
// handed over: a watcher that read the server before another's change
// cannot put older flags back.
func TestFlagFollowerNeverGoesBack(t *testing.T) {
	tests := []struct {
		name     string
		versions []uint64 // at start, then at each refresh
		want     string   // the color served at the end
	}{
		{"newer versions", []uint64{1, 2, 3}, `"blue"`},
		{"an older version last", []uint64{1, 3, 2}, `"red"`},
		{"the same version again", []uint64{1, 2, 2}, `"red"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := &scriptedDocs{docs: []string{ofrepDoc("red"), ofrepDoc("red"), ofrepDoc("blue")}, versions: tt.versions}
			f, err := newFlagFollower(docs, (&logtest.Buffer{}).Logger())
			if err != nil {
				t.Fatal(err)
			}
			defer f.shutdown(context.Background())
			f.refresh()
			f.refresh()
			if got, _, _ := localEval(f.p, "color", nil); fmt.Sprintf("%q", got) != tt.want {
				t.Errorf("color %q, want %s", got, tt.want)
			}
		})
	}
}
