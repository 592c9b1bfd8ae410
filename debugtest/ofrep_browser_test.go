package debugtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap"
	"github.com/flagsnap/flagsnap/internal/logtest"
)

// The OFREP tests run a page made with OpenFeature's web SDK and its OFREP
// web provider (in ofrepweb, bundled by esbuild) against `flagsnap serve
// --http`, in a real browser: the browser's own CORS checks, fetch and
// EventSource are what is tested.

// Bounds of the waits: the page's first flags, a change reaching it, and
// the command's start and stop.
const (
	ofrepPageWait   = 15 * time.Second
	ofrepChangeWait = 15 * time.Second
	ofrepServeWait  = 30 * time.Second
	ofrepStopWait   = 10 * time.Second
	ofrepBuildWait  = 5 * time.Minute
)

// ofrepFlagDoc is the flag file served, with the parts the change rewrites
// left as verbs: the e-mail domain that gets the new checkout, and the high
// search limit. Every flag but the disabled one depends on the user: on
// their e-mail, their targeting key, or a hash of it.
const ofrepFlagDoc = `{"metadata": {"flagSetId": "shop"}, "flags": {
  "new-checkout": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
    "targeting": {"if": [{"ends_with": [{"var": "email"}, %q]}, "on"]}},
  "checkout-banner": {"state": "ENABLED", "variants": {"red": "red", "blue": "blue", "green": "green"}, "defaultVariant": "red",
    "targeting": {"fractional": [["red", 34], ["blue", 33], ["green", 33]]}},
  "search-limit": {"state": "ENABLED", "variants": {"low": 10, "high": %d}, "defaultVariant": "low",
    "targeting": {"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "high"]}},
  "theme": {"state": "ENABLED", "variants": {"light": {"background": "white", "dense": false}, "dark": {"background": "black", "dense": true}},
    "defaultVariant": "light", "targeting": {"if": [{"in": [{"var": "targetingKey"}, ["user-42", "user-7"]]}, "dark"]}},
  "legacy-search": {"state": "DISABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}
}}`

var (
	ofrepBefore = fmt.Sprintf(ofrepFlagDoc, "@example.com", 100)
	// The change: ada@example.com loses the new checkout, and the high
	// search limit goes up.
	ofrepAfter   = fmt.Sprintf(ofrepFlagDoc, "@example.org", 250)
	ofrepChanged = []string{"new-checkout", "search-limit"}
)

// ofrepFlag is a flag the page shows, with its type as the page takes it.
type ofrepFlag struct{ key, typ string }

var ofrepPageFlags = []ofrepFlag{
	{"new-checkout", "boolean"},
	{"checkout-banner", "string"},
	{"search-limit", "number"},
	{"theme", "object"},
	{"legacy-search", "boolean"},
}

// ofrepUser is the evaluation context the page sets.
var ofrepUser = map[string]string{"targetingKey": "user-42", "email": "ada@example.com"}

// ofrepRow is one flag as the page shows it, or as the in-process provider
// evaluates it: its value as JSON, variant, reason and error code.
type ofrepRow struct {
	Key     string `json:"key"`
	Value   string `json:"value"`
	Variant string `json:"variant"`
	Reason  string `json:"reason"`
	Error   string `json:"error"`
}

// ofrepPageState is what the page shows.
type ofrepPageState struct {
	Status string     `json:"status"`
	Rows   []ofrepRow `json:"rows"`
	Events []string   `json:"events"`
}

const ofrepReadPage = `({
  status: document.getElementById('status').textContent,
  rows: [...document.querySelectorAll('#flags tbody tr')].map(r => ({
    key: r.dataset.key,
    value: r.querySelector('.value').textContent,
    variant: r.querySelector('.variant').textContent,
    reason: r.querySelector('.reason').textContent,
    error: r.querySelector('.error').textContent,
  })),
  events: [...document.querySelectorAll('#events li')].map(li => li.textContent),
})`

// Two pages, each in a tab of its own, get their flags from one flagsnap
// serve, whose --allow-origin names the origin of the first only.
func TestOFREPInABrowser(t *testing.T) {
	exe := browser(t)
	env := startOFREPEnv(t)
	bctx := startBrowser(t, exe)
	// The browser starts with a blank tab; each case opens its own.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	t.Run("allowed origin", func(t *testing.T) { testOFREPAllowed(t, env, bctx) })
	t.Run("refused origin", func(t *testing.T) { testOFREPRefused(t, env, bctx) })
}

// openTab opens a tab in the browser of bctx, closed when the test ends,
// whose events tab records; on failure, the test's log has them, with
// what serve printed.
func openTab(t *testing.T, env *ofrepEnv, bctx context.Context) (context.Context, *tabRecord) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	tab := &tabRecord{}
	if err := chromedp.Listen(ctx, tab.listen); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("what the browser saw:\n%s", tab.dump())
			t.Logf("flagsnap serve said:\n%s", env.serve.output())
		}
	})
	return ctx, tab
}

// A page of an allowed origin shows, through the web provider, what the
// in-process provider evaluates for its user; when the flag file changes,
// the server's event stream alone (the provider neither polls nor fetches
// on visibility) brings the new values, without a reload; and the browser
// reports no error and no CORS failure on the way.
func testOFREPAllowed(t *testing.T, env *ofrepEnv, bctx context.Context) {
	ctx, tab := openTab(t, env, bctx)
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(env.pageURL(env.allowed)))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("the page: %d", resp.Status)
	}
	state := waitPage(t, ctx, ofrepPageWait, "the provider to be ready", func(s ofrepPageState) bool { return s.Status != "starting" })
	if state.Status != "ready" {
		t.Fatalf("the page's provider: %q, want ready", state.Status)
	}
	checkRows(t, "before the change", state.Rows, evaluateInProcess(t, ofrepBefore))
	if len(state.Events) != 0 {
		t.Errorf("events before the change: %q", state.Events)
	}

	// The change is pushed on the event stream: it must be open before
	// the file changes.
	stream := tab.waitFor(t, ofrepPageWait, "the response of the event stream", func() *netExchange {
		return tab.find(func(x *netExchange) bool { return isStream(x) && x.status != 0 })
	})
	if stream.status != http.StatusOK {
		t.Fatalf("the event stream: status %d, response headers %v", stream.status, stream.respHeaders)
	}
	checkHeader(t, "the event stream", stream.respHeaders, "Content-Type", "text/event-stream")
	checkHeader(t, "the event stream", stream.respHeaders, "Access-Control-Allow-Origin", env.allowed.URL)
	if n := tab.count(isBulkPost); n != 1 {
		t.Errorf("%d bulk evaluations before the change, want 1", n)
	}
	first := tab.find(isBulkPost)
	checkHeader(t, "the bulk evaluation", first.respHeaders, "Access-Control-Allow-Origin", env.allowed.URL)
	etag := header(first.respHeaders, "ETag")
	if etag == "" {
		t.Errorf("the bulk evaluation has no ETag: %v", first.respHeaders)
	}
	if !headerListHas(header(first.respHeaders, "Access-Control-Expose-Headers"), "ETag") {
		t.Errorf("the bulk evaluation does not expose its ETag to the page: %v", first.respHeaders)
	}

	want := evaluateInProcess(t, ofrepAfter)
	changed := time.Now()
	env.rewrite(t, ofrepAfter)
	state = waitPage(t, ctx, ofrepChangeWait, "the change on the page", func(s ofrepPageState) bool { return rowsMatch(s.Rows, want) })
	t.Logf("the change reached the page within %v", time.Since(changed).Round(time.Millisecond))
	checkRows(t, "after the change", state.Rows, want)
	if state.Status != "ready" {
		t.Errorf("the page's provider after the change: %q", state.Status)
	}
	// One configuration-changed event, naming the flags that changed.
	wantEvent := string(openfeature.ProviderConfigChange) + ": " + strings.Join(ofrepChanged, ",")
	if len(state.Events) != 1 || !sameKeys(state.Events[0], wantEvent) {
		t.Errorf("events: %q, want [%q]", state.Events, wantEvent)
	}

	// The page fetched again because of a message of the stream: the
	// fetch carries the ETag of the first answer (read through CORS) and
	// the message's etag. No other evaluation was asked for.
	msgs := tab.messages()
	if len(msgs) == 0 {
		t.Fatal("the browser received no message on the event stream")
	}
	var msg struct{ Type, Etag string }
	if err := json.Unmarshal([]byte(msgs[0].Data), &msg); err != nil || msg.Type != "refetchEvaluation" {
		t.Errorf("the stream's message: event %q, id %q, data %q: %v", msgs[0].EventName, msgs[0].EventID, msgs[0].Data, err)
	}
	posts := tab.all(isBulkPost)
	if len(posts) != 2 {
		t.Fatalf("%d bulk evaluations, want 2: one at the start, one for the change", len(posts))
	}
	again := posts[1]
	if got := header(again.reqHeaders, "If-None-Match"); got != etag {
		t.Errorf("the fetch after the change sent If-None-Match %q, want the first answer's ETag %q", got, etag)
	}
	if msg.Etag != "" && again.query().Get("flagConfigEtag") != msg.Etag {
		t.Errorf("the fetch after the change: %s, want flagConfigEtag=%s from the stream's message", again.url, msg.Etag)
	}
	if again.status != http.StatusOK {
		t.Errorf("the fetch after the change: status %d", again.status)
	}
	if n := tab.count(isStream); n != 1 {
		t.Errorf("%d event streams opened, want 1", n)
	}
	if n := tab.count(func(x *netExchange) bool {
		return isOFREP(x) && !isBulkPost(x) && !isStream(x) && x.method != http.MethodOptions
	}); n != 0 {
		t.Errorf("%d other requests to OFREP", n)
	}

	// Nothing the browser logged is an error or a warning, a CORS
	// refusal included; no request failed.
	for _, p := range tab.problems() {
		t.Error(p)
	}
	for _, x := range tab.all(func(x *netExchange) bool { return x.failed != "" }) {
		t.Errorf("%s %s failed: %s", x.method, x.url, x.failed)
	}
	t.Logf("bulk evaluation: %d, %v", first.status, first.respHeaders)
	t.Logf("event stream: %d, %v; messages %+v", stream.status, stream.respHeaders, msgs)
}

// A page of an origin that is not allowed gets no flags: the browser
// refuses the server's answers, and the page reports the provider's error.
func testOFREPRefused(t *testing.T, env *ofrepEnv, bctx context.Context) {
	ctx, tab := openTab(t, env, bctx)
	if _, err := chromedp.Run(ctx, chromedp.NavigateResponse(env.pageURL(env.refused))); err != nil {
		t.Fatal(err)
	}
	state := waitPage(t, ctx, ofrepPageWait, "the provider to start or fail", func(s ofrepPageState) bool { return s.Status != "starting" })
	if !strings.HasPrefix(state.Status, "error: ") {
		t.Errorf("the page's provider: %q, want an error", state.Status)
	}
	t.Logf("the page says: %s", state.Status)
	// Every flag is the page's default, as an error.
	defaults := map[string]string{"boolean": "false", "string": `""`, "number": "0", "object": "{}"}
	if len(state.Rows) != len(ofrepPageFlags) {
		t.Fatalf("rows: %+v", state.Rows)
	}
	for i, f := range ofrepPageFlags {
		r := state.Rows[i]
		if r.Key != f.key || r.Value != defaults[f.typ] || r.Variant != "" || r.Reason != string(openfeature.ErrorReason) || r.Error == "" {
			t.Errorf("flag %s: %+v, want its default %s and an error", f.key, r, defaults[f.typ])
		}
	}
	// The browser says why: CORS.
	cors := tab.all(func(x *netExchange) bool { return isOFREP(x) && x.cors != "" })
	if len(cors) == 0 {
		t.Errorf("no request to OFREP was refused for CORS")
	}
	for _, x := range cors {
		t.Logf("refused: %s %s (%s): %s; response %d %v", x.method, x.url, x.typ, x.cors, x.status, x.respHeaders)
	}
	if n := tab.count(isStream); n != 0 {
		t.Errorf("%d event streams opened", n)
	}
}

// ofrepEnv is what both cases run on: the page's bundle, two origins that
// serve it (one allowed, one not), and flagsnap serve on a flag file.
type ofrepEnv struct {
	allowed, refused *httptest.Server
	flagFile         string
	serve            *serveProcess
	ofrepURL         string // the base URL the page is given
}

func startOFREPEnv(t *testing.T) *ofrepEnv {
	t.Helper()
	web := webDeps(t)
	bundle := t.TempDir()
	esbuild(t, web, bundle)
	index, err := os.ReadFile(filepath.Join(web, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := http.NewServeMux()
	page.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(index)
	})
	page.HandleFunc("GET /page.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(bundle, "page.js"))
	})
	env := &ofrepEnv{allowed: httptest.NewServer(page), refused: httptest.NewServer(page)}
	t.Cleanup(env.allowed.Close)
	t.Cleanup(env.refused.Close)

	exe := buildFlagsnap(t)
	env.flagFile = filepath.Join(t.TempDir(), "flags.json")
	if err := os.WriteFile(env.flagFile, []byte(ofrepBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	env.serve = startServe(t, exe, env.flagFile, "--addr", "127.0.0.1:0", "--http", "127.0.0.1:0", "--allow-origin", env.allowed.URL)
	env.ofrepURL = env.serve.httpURL
	return env
}

// pageURL is the page on the origin of srv, for ofrepUser and the flags.
func (e *ofrepEnv) pageURL(srv *httptest.Server) string {
	q := url.Values{"ofrep": {e.ofrepURL}}
	for _, f := range ofrepPageFlags {
		q.Add("flag", f.key+":"+f.typ)
	}
	for k, v := range ofrepUser {
		q.Set(k, v)
	}
	return srv.URL + "/?" + q.Encode()
}

// rewrite replaces the flag file as an editor does: a new file renamed
// over the old one.
func (e *ofrepEnv) rewrite(t *testing.T, doc string) {
	t.Helper()
	tmp := e.flagFile + ".new"
	if err := os.WriteFile(tmp, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, e.flagFile); err != nil {
		t.Fatal(err)
	}
}

// webDeps is the page's directory, with its npm packages installed by
// npm ci from the lock file when they are not there yet.
func webDeps(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("ofrepweb")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "esbuild")); err == nil {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm to install the page's packages: install Node.js and npm (Debian: apt-get install npm), or run npm ci --prefix debugtest/ofrepweb")
	}
	ctx, cancel := context.WithTimeout(context.Background(), ofrepBuildWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return dir
}

// esbuild bundles the page's script, with the packages it imports, into
// dir/page.js.
func esbuild(t *testing.T, web, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(web, "node_modules", ".bin", "esbuild"), "page.js",
		"--bundle", "--format=iife", "--target=es2020", "--outfile="+filepath.Join(dir, "page.js"), "--log-level=warning")
	cmd.Dir = web
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
	if len(out) > 0 {
		t.Errorf("esbuild warns:\n%s", out)
	}
}

// buildFlagsnap builds the command of this repository into a temporary
// directory.
func buildFlagsnap(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "cmd", "flagsnap"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "flagsnap")
	ctx, cancel := context.WithTimeout(context.Background(), ofrepBuildWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", src, err, out)
	}
	return exe
}

// serveProcess is a running flagsnap serve.
type serveProcess struct {
	cmd     *exec.Cmd
	out     logtest.Buffer // its output, written by exec's copier and read by the test
	done    chan struct{}  // closed when the process has exited
	httpURL string         // http://ADDR of its HTTP side
}

func (s *serveProcess) output() string { return s.out.String() }

// serveHTTPLine is the line serve prints once its HTTP side listens.
var serveHTTPLine = regexp.MustCompile(`over (?:HTTP|OFREP) on (http://[^/\s]+)/`)

// startServe starts flagsnap serve on file and waits until its HTTP side
// listens; it is interrupted, and killed if it does not stop in time, when
// the test ends.
func startServe(t *testing.T, exe, file string, args ...string) *serveProcess {
	t.Helper()
	s := &serveProcess{done: make(chan struct{})}
	s.cmd = exec.Command(exe, append([]string{"serve", file}, args...)...)
	s.cmd.Stdout = &s.out
	s.cmd.Stderr = &s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(ofrepStopWait):
			t.Errorf("flagsnap serve did not stop within %v of an interrupt; killed", ofrepStopWait)
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	deadline := time.Now().Add(ofrepServeWait)
	for {
		if m := serveHTTPLine.FindStringSubmatch(s.output()); m != nil {
			s.httpURL = m[1]
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("flagsnap serve exited: %v\n%s", s.cmd.ProcessState, s.output())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("flagsnap serve did not serve HTTP within %v:\n%s", ofrepServeWait, s.output())
		}
	}
}

// evaluateInProcess is what the in-process provider evaluates for ofrepUser
// on doc, for the page's flags, with the page's defaults.
func evaluateInProcess(t *testing.T, doc string) []ofrepRow {
	t.Helper()
	p, err := flagsnap.NewProvider(flagsnap.WithFlags([]byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	flat := openfeature.FlattenedContext{}
	for k, v := range ofrepUser {
		flat[k] = v
	}
	var rows []ofrepRow
	for _, f := range ofrepPageFlags {
		var value any
		var detail openfeature.ProviderResolutionDetail
		switch f.typ {
		case "boolean":
			r := p.BooleanEvaluation(ctx, f.key, false, flat)
			value, detail = r.Value, r.ProviderResolutionDetail
		case "string":
			r := p.StringEvaluation(ctx, f.key, "", flat)
			value, detail = r.Value, r.ProviderResolutionDetail
		case "number":
			r := p.FloatEvaluation(ctx, f.key, 0, flat)
			value, detail = r.Value, r.ProviderResolutionDetail
		case "object":
			r := p.ObjectEvaluation(ctx, f.key, map[string]any{}, flat)
			value, detail = r.Value, r.ProviderResolutionDetail
		}
		v, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		d := detail.ResolutionDetail()
		rows = append(rows, ofrepRow{Key: f.key, Value: string(v), Variant: d.Variant, Reason: string(d.Reason), Error: string(d.ErrorCode)})
	}
	return rows
}

// rowsMatch tells whether the page shows want: the same values (as JSON
// values, whatever the order of an object's members), variants, reasons,
// and error codes.
func rowsMatch(got, want []ofrepRow) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if !rowMatches(got[i], want[i]) {
			return false
		}
	}
	return true
}

func rowMatches(got, want ofrepRow) bool {
	code, _, _ := strings.Cut(got.Error, ":")
	return got.Key == want.Key && sameJSON(got.Value, want.Value) && got.Variant == want.Variant &&
		got.Reason == want.Reason && code == want.Error
}

func checkRows(t *testing.T, when string, got, want []ofrepRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: the page shows %+v, want %+v", when, got, want)
		return
	}
	for i := range want {
		if !rowMatches(got[i], want[i]) {
			t.Errorf("%s: the page shows %+v, the in-process provider %+v", when, got[i], want[i])
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// sameKeys compares two "EVENT: key,key" lines, whatever the order of the
// keys.
func sameKeys(a, b string) bool {
	ea, ka, _ := strings.Cut(a, ": ")
	eb, kb, _ := strings.Cut(b, ": ")
	x, y := strings.Split(ka, ","), strings.Split(kb, ",")
	slices.Sort(x)
	slices.Sort(y)
	return ea == eb && slices.Equal(x, y)
}

// waitPage reads the page until ready says it is done, within d, and
// returns what it shows then.
func waitPage(t *testing.T, ctx context.Context, d time.Duration, what string, ready func(ofrepPageState) bool) ofrepPageState {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[ofrepPageState](ofrepReadPage))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		if ready(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; the page shows %+v", d, what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// netExchange is one request of the page as the browser reports it.
type netExchange struct {
	method, url, typ string
	reqHeaders       network.Headers
	status           int64
	respHeaders      network.Headers
	failed           string // why loading failed, "" if it did not
	cors             string // the CORS error, "" if none
}

func (x *netExchange) parsed() *url.URL {
	u, err := url.Parse(x.url)
	if err != nil {
		return &url.URL{}
	}
	return u
}

func (x *netExchange) path() string      { return x.parsed().Path }
func (x *netExchange) query() url.Values { return x.parsed().Query() }

func isOFREP(x *netExchange) bool { return strings.HasPrefix(x.path(), "/ofrep/") }

func isBulkPost(x *netExchange) bool {
	return x.method == http.MethodPost && x.path() == "/ofrep/v1/evaluate/flags"
}

func isStream(x *netExchange) bool {
	return x.method == http.MethodGet && x.path() == "/ofrep/v1/events"
}

// tabRecord is what the browser reports about the page: its requests, the
// messages of its event streams, and what it logged.
type tabRecord struct {
	mu      sync.Mutex
	order   []network.RequestID
	byID    map[network.RequestID]*netExchange
	msgs    []network.EventEventSourceMessageReceived
	logged  []string // errors and warnings, exceptions
	console []string // everything, for the failure report
}

func (r *tabRecord) exchange(id network.RequestID) *netExchange {
	if r.byID == nil {
		r.byID = make(map[network.RequestID]*netExchange)
	}
	x, ok := r.byID[id]
	if !ok {
		x = &netExchange{}
		r.byID[id] = x
		r.order = append(r.order, id)
	}
	return x
}

func (r *tabRecord) listen(ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		x := r.exchange(ev.RequestID)
		x.method, x.url, x.typ, x.reqHeaders = ev.Request.Method, ev.Request.URL, string(ev.Type), ev.Request.Headers
	case *network.EventResponseReceived:
		x := r.exchange(ev.RequestID)
		x.status, x.respHeaders = ev.Response.Status, ev.Response.Headers
		if x.url == "" {
			x.url = ev.Response.URL
		}
	case *network.EventLoadingFailed:
		x := r.exchange(ev.RequestID)
		x.failed = ev.ErrorText
		if ev.BlockedReason != "" {
			x.failed += " (blocked: " + string(ev.BlockedReason) + ")"
		}
		if ev.CorsErrorStatus != nil {
			x.cors = string(ev.CorsErrorStatus.CorsError)
			if ev.CorsErrorStatus.FailedParameter != "" {
				x.cors += " (" + ev.CorsErrorStatus.FailedParameter + ")"
			}
		}
	case *network.EventEventSourceMessageReceived:
		r.msgs = append(r.msgs, *ev)
	case *runtime.EventExceptionThrown:
		text := ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			text += " " + ev.ExceptionDetails.Exception.Description
		}
		r.logged = append(r.logged, "exception: "+text)
		r.console = append(r.console, "exception: "+text)
	case *log.EventEntryAdded:
		line := fmt.Sprintf("log (%s, %s): %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
		r.console = append(r.console, line)
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			r.logged = append(r.logged, line)
		}
	case *runtime.EventConsoleAPICalled:
		var args []string
		for _, a := range ev.Args {
			if a.Value != nil {
				args = append(args, string(a.Value))
			} else {
				args = append(args, a.Description)
			}
		}
		line := fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
		r.console = append(r.console, line)
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			r.logged = append(r.logged, line)
		}
	}
}

// all is a copy of the exchanges that keep says to keep, in the order of
// their first event.
func (r *tabRecord) all(keep func(*netExchange) bool) []netExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []netExchange
	for _, id := range r.order {
		if x := r.byID[id]; keep(x) {
			out = append(out, *x)
		}
	}
	return out
}

func (r *tabRecord) count(keep func(*netExchange) bool) int { return len(r.all(keep)) }

// find is a copy of the first exchange keep keeps, or nil.
func (r *tabRecord) find(keep func(*netExchange) bool) *netExchange {
	if xs := r.all(keep); len(xs) > 0 {
		return &xs[0]
	}
	return nil
}

// waitFor calls f until it returns an exchange, within d.
func (r *tabRecord) waitFor(t *testing.T, d time.Duration, what string, f func() *netExchange) *netExchange {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if x := f(); x != nil {
			return x
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *tabRecord) messages() []network.EventEventSourceMessageReceived {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

func (r *tabRecord) problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.logged)
}

// dump is everything recorded, for a failure's report.
func (r *tabRecord) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, id := range r.order {
		x := r.byID[id]
		fmt.Fprintf(&b, "  %s %s (%s) request %v\n    -> %d %v", x.method, x.url, x.typ, x.reqHeaders, x.status, x.respHeaders)
		if x.failed != "" {
			fmt.Fprintf(&b, " FAILED %s", x.failed)
		}
		if x.cors != "" {
			fmt.Fprintf(&b, " CORS %s", x.cors)
		}
		b.WriteString("\n")
	}
	for _, m := range r.msgs {
		fmt.Fprintf(&b, "  event stream message: event %q id %q data %q\n", m.EventName, m.EventID, m.Data)
	}
	for _, c := range r.console {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	return b.String()
}

// header is the value of a header the browser reports, by any case of its
// name; the browser joins repeated headers with newlines.
func header(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

func checkHeader(t *testing.T, what string, h network.Headers, name, want string) {
	t.Helper()
	got := header(h, name)
	if name == "Content-Type" {
		got, _, _ = strings.Cut(got, ";")
	}
	if got != want {
		t.Errorf("%s: %s %q, want %q (all headers: %v)", what, name, got, want, h)
	}
}

// headerListHas tells whether a comma-separated header value lists name.
func headerListHas(list, name string) bool {
	for _, s := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == '\n' }) {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return true
		}
	}
	return false
}
