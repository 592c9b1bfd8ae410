package flagsnap

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/open-feature/go-sdk/openfeature"

	"github.com/flagsnap/flagsnap/evaluator"
	"github.com/flagsnap/flagsnap/internal/httporigin"
	"github.com/flagsnap/flagsnap/source"
)

// debugFlags has a flag of each kind the page shows differently: a rule,
// a static flag, a disabled one and a broken one.
const debugFlags = `{"metadata": {"team": "checkout"}, "flags": {
  "hot":    {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "off",
             "targeting": {"if": [{"==": [{"var": "tier"}, "gold"]}, "on"]}, "metadata": {"owner": "payments"}},
  "color":  {"state": "ENABLED", "variants": {"red": "red", "blue": "blue"}, "defaultVariant": "red"},
  "off":    {"state": "DISABLED", "variants": {"on": true}, "defaultVariant": "on"},
  "broken": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "nope"},
  "inf":    {"state": "ENABLED", "variants": {"a": "a"}, "defaultVariant": "a", "targeting": {"if": [{"==": [{"/": [1, 0]}, 1]}, "a", null]}}
}}`

// debugProvider returns a provider serving doc from a memory source,
// initialised, and the source. A debug handler is made before Init, as
// its documentation advises, so that the provider keeps its document.
func debugProvider(t *testing.T, doc string, opts ...Option) (*Provider, *source.Memory) {
	t.Helper()
	m := source.NewMemory([]byte(doc))
	p, err := NewProvider(append([]Option{WithSource(m), WithRetryGracePeriod(time.Hour)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	DebugHandler(p)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	return p, m
}

// debugGet asks h for target, as a service that mounts it at the root.
func debugGet(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	return w
}

// checkDebugHeaders checks what every answer of the handler carries.
func checkDebugHeaders(t *testing.T, target string, h http.Header) {
	t.Helper()
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" ||
		!strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'none'; style-src 'sha256-") {
		t.Errorf("%s: headers %v", target, h)
	}
}

func TestDebugEndpoints(t *testing.T) {
	p, _ := debugProvider(t, debugFlags)
	h := DebugHandler(p)
	long := "/evaluate?flag=hot&context=" + url.QueryEscape(`{"k": "`+strings.Repeat("x", maxDebugQuery)+`"}`)
	deep := "/evaluate?flag=hot&context=" + url.QueryEscape(strings.Repeat(`{"a":`, maxContextDepth+1)+"1"+strings.Repeat("}", maxContextDepth+1))
	for _, tt := range []struct {
		target, contentType string
		status              int
		body                string // a part of the body
	}{
		{"/", "text/html; charset=utf-8", 200, "<title>flagsnap: 5 flags, serving</title>"},
		{"/status", "application/json", 200, `"state": "serving"`},
		{"/usage", "application/json", 200, `"flags"`},
		{"/flags", "application/json", 200, `"hot"`},
		{"/evaluate?flag=hot&context=%7B%22tier%22%3A%22gold%22%7D", "application/json", 200, `"variant": "on"`},
		{"/evaluate?flag=hot", "application/json", 200, `"reason": "DEFAULT"`},
		{"/evaluate?flag=absent", "application/json", 200, `"errorCode": "FLAG_NOT_FOUND"`},
		{"/evaluate", "application/json", 400, `"error": "flag is missing`},
		{"/evaluate?flag=hot&context=%7Bnope", "application/json", 400, `"error": "the context is not a JSON object: invalid character 'n'`},
		{"/evaluate?flag=hot&context=%5B1%5D", "application/json", 400, `"error": "the context is not a JSON object`},
		{"/evaluate?flag=hot&context=null", "application/json", 400, `"error": "the context is not a JSON object: null"`},
		{"/evaluate?flag=hot&context=%7B%7D%7B%7D", "application/json", 400, `data after the object`},
		{deep, "application/json", 400, fmt.Sprintf("the context nests %d levels deep, over the limit of %d", maxContextDepth+1, maxContextDepth)},
		{long, "text/plain; charset=utf-8", 400, fmt.Sprintf("over the limit of %d", maxDebugQuery)},
		{"/?flag=hot&context=%7Bnope", "text/html; charset=utf-8", 400, `<p class="bad" id="input-error">the context is not a JSON object`},
		{"/?context=%7B%7D", "text/html; charset=utf-8", 400, `give the key of the flag to evaluate`},
		{"/?q=%zz", "text/plain; charset=utf-8", 400, "not URL-encoded"},
		{"/nowhere", "text/plain; charset=utf-8", 404, "no such page"},
	} {
		w := debugGet(t, h, tt.target)
		name := tt.target[:min(len(tt.target), 80)]
		if w.Code != tt.status || w.Header().Get("Content-Type") != tt.contentType || !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%s: %d %q, want %d %q with %q; body:\n%.600s", name, w.Code, w.Header().Get("Content-Type"), tt.status, tt.contentType, tt.body, w.Body)
		}
		checkDebugHeaders(t, name, w.Header())
	}
}

func TestDebugOnlyReads(t *testing.T) {
	p, _ := debugProvider(t, debugFlags)
	srv := httptest.NewServer(DebugHandler(p))
	defer srv.Close()
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		for _, path := range []string{"/", "/evaluate?flag=hot"} {
			req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q", method, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
			checkDebugHeaders(t, method+" "+path, resp.Header)
		}
	}
	resp, err := srv.Client().Head(srv.URL + "/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || len(body) != 0 {
		t.Errorf("HEAD: %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
}

// The JSON endpoints say what the provider's methods say, after a known
// sequence of evaluations and flag sets; the handler's own evaluations
// are not counted.
func TestDebugJSONMatchesTheProvider(t *testing.T) {
	p, m := debugProvider(t, debugFlags)
	if err := m.Set([]byte(`{"flags": [`)); err == nil {
		t.Fatal("a broken document was taken")
	}
	ctx := context.Background()
	gold := openfeature.FlattenedContext{"tier": "gold"}
	for range 3 {
		p.BooleanEvaluation(ctx, "hot", false, gold)
	}
	p.BooleanEvaluation(ctx, "hot", false, nil)
	p.StringEvaluation(ctx, "color", "", nil)
	p.BooleanEvaluation(ctx, "broken", false, nil)
	p.BooleanEvaluation(ctx, "absent", false, nil)
	p.BooleanEvaluation(ctx, "absent", false, nil)
	h := DebugHandler(p)
	for range 5 {
		if w := debugGet(t, h, "/evaluate?flag=hot&context=%7B%22tier%22%3A%22gold%22%7D"); w.Code != 200 {
			t.Fatal(w.Body)
		}
		if w := debugGet(t, h, "/?flag=absent"); w.Code != 200 {
			t.Fatal(w.Body)
		}
	}

	var usage Usage
	decodeDebug(t, h, "/usage", &usage)
	if want := p.Usage(); !reflect.DeepEqual(usage, want) {
		t.Errorf("/usage:\n%+v\nUsage():\n%+v", usage, want)
	}
	hot := usage.Flags["hot"]
	if hot.Evaluations != 4 || hot.Variants["on"] != 3 || hot.Variants["off"] != 1 || usage.Flags["color"].Evaluations != 1 ||
		usage.Flags["broken"].Errors != 1 || usage.Missing["absent"] != 2 || usage.Flags["off"].Evaluations != 0 {
		t.Errorf("/usage counts: %+v", usage)
	}

	var st SourceStatus
	decodeDebug(t, h, "/status", &st)
	want := p.SourceStatus()
	if !st.AppliedAt.Equal(want.AppliedAt) || !st.LastErrorAt.Equal(want.LastErrorAt) {
		t.Errorf("/status times %v %v, SourceStatus() %v %v", st.AppliedAt, st.LastErrorAt, want.AppliedAt, want.LastErrorAt)
	}
	st.AppliedAt, st.LastErrorAt, want.AppliedAt, want.LastErrorAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("/status %+v\nSourceStatus() %+v", st, want)
	}
	if st.Flags != 5 || st.Received != 2 || st.Applied != 1 || st.Rejected != 1 || st.BrokenFlags != 1 || st.LastError == "" {
		t.Errorf("/status counts: %+v", st)
	}
}

func decodeDebug(t *testing.T, h http.Handler, target string, v any) {
	t.Helper()
	w := debugGet(t, h, target)
	if w.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", target, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
}

// A debug handler made after Init, as a service that wires its routes
// after SetProviderAndWait makes it, has the document in force, and the
// next one.
func TestDebugFlagsMadeAfterInit(t *testing.T) {
	m := source.NewMemory([]byte(debugFlags))
	p, err := NewProvider(WithSource(m))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the document compressed", func() bool { return p.snap.Load().doc.compressed.Load() != nil })
	if z := *p.snap.Load().doc.compressed.Load(); len(z) >= len(debugFlags) || p.snap.Load().doc.raw.Load() != nil {
		t.Errorf("the document kept is %d bytes compressed, of %d, and the raw one is kept too: %v", len(z), len(debugFlags), p.snap.Load().doc.raw.Load() != nil)
	}
	h := DebugHandler(p)
	if w := debugGet(t, h, "/flags"); w.Code != http.StatusOK || w.Body.String() != debugFlags {
		t.Errorf("/flags: %d %.80q", w.Code, w.Body)
	}
	next := strings.Replace(debugFlags, `"team": "checkout"`, `"team": "billing"`, 1)
	if err := m.Set([]byte(next)); err != nil {
		t.Fatal(err)
	}
	if w := debugGet(t, h, "/flags"); w.Code != http.StatusOK || w.Body.String() != next {
		t.Errorf("/flags after the next flag set: %d %.80q", w.Code, w.Body)
	}
}

// /flags is the document in force byte for byte, whose hash is the
// status's digest, and follows an update.
func TestDebugFlagsIsTheDocumentInForce(t *testing.T) {
	p, m := debugProvider(t, debugFlags)
	h := DebugHandler(p)
	check := func(doc, contentType string) {
		t.Helper()
		w := debugGet(t, h, "/flags")
		if w.Code != 200 || w.Body.String() != doc || w.Header().Get("Content-Type") != contentType {
			t.Errorf("/flags: %d %q %.80q", w.Code, w.Header().Get("Content-Type"), w.Body)
		}
		if sum := sha256.Sum256(w.Body.Bytes()); fmt.Sprintf("%x", sum) != p.SourceStatus().Digest {
			t.Error("/flags does not hash to the status's digest")
		}
	}
	check(debugFlags, "application/json")
	yaml := "flags:\n  color:\n    state: ENABLED\n    variants: {red: red}\n    defaultVariant: red\n"
	if err := m.Set([]byte(yaml)); err != nil {
		t.Fatal(err)
	}
	check(yaml, "application/yaml; charset=utf-8")
	// JSON or YAML as the flag set read it: by the content, after a byte
	// order mark, and YAML's flow style is YAML.
	for _, c := range []struct{ doc, contentType string }{
		{"\xef\xbb\xbf" + debugFlags, "application/json"},
		{"{flags: {color: {state: ENABLED, variants: {red: red}, defaultVariant: red}}}\n", "application/yaml; charset=utf-8"},
	} {
		if err := m.Set([]byte(c.doc)); err != nil {
			t.Fatal(err)
		}
		check(c.doc, c.contentType)
	}
}

// Before the first flag set the handler says so, and still answers.
func TestDebugBeforeTheFirstFlags(t *testing.T) {
	p, err := NewProvider(WithSource(newFakeSource()))
	if err != nil {
		t.Fatal(err)
	}
	h := DebugHandler(p)
	if w := debugGet(t, h, "/"); w.Code != 200 || !strings.Contains(w.Body.String(), "No flags have been loaded yet") {
		t.Errorf("/: %d %.300s", w.Code, w.Body)
	}
	if w := debugGet(t, h, "/flags"); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "no flags have been loaded yet") {
		t.Errorf("/flags: %d %s", w.Code, w.Body)
	}
	var res debugResultJSON
	decodeDebug(t, h, "/evaluate?flag=hot", &res)
	if res.Reason != "ERROR" || res.ErrorCode != "PROVIDER_NOT_READY" || res.Explanation != nil {
		t.Errorf("/evaluate: %+v", res)
	}
	var st SourceStatus
	decodeDebug(t, h, "/status", &st)
	if st.State != SourceStopped {
		t.Errorf("/status: %+v", st)
	}
}

// debugResultJSON is debugResult as a client reads it.
type debugResultJSON struct {
	debugResult
	Explanation map[string]any `json:"explanation"`
}

func TestDebugEvaluate(t *testing.T) {
	p, _ := debugProvider(t, debugFlags, WithContextEnricher(func(map[string]any) map[string]any {
		return map[string]any{"tier": "gold"}
	}))
	h := DebugHandler(p)
	for _, tt := range []struct {
		query                                   string
		value                                   any
		variant, reason, errorCode, explanation string
	}{
		// The enricher's tier wins over the caller's, as in the provider.
		{"flag=hot&context=%7B%22tier%22%3A%22silver%22%7D", true, "on", "TARGETING_MATCH", "", "var tier → \"gold\""},
		{"flag=color", "red", "red", "STATIC", "", `variant "red"`},
		{"flag=off", nil, "", "DISABLED", "", "reason DISABLED"},
		{"flag=broken", nil, "", "ERROR", "PARSE_ERROR", "error PARSE_ERROR"},
		{"flag=absent", nil, "", "ERROR", "FLAG_NOT_FOUND", "error FLAG_NOT_FOUND"},
		{"flag=inf", "a", "a", "DEFAULT", "", "/ → +Inf"},
	} {
		var res debugResultJSON
		decodeDebug(t, h, "/evaluate?"+tt.query, &res)
		if !reflect.DeepEqual(res.Value, tt.value) || res.Variant != tt.variant || res.Reason != tt.reason || res.ErrorCode != tt.errorCode ||
			!strings.Contains(res.ExplanationText, tt.explanation) {
			t.Errorf("%s: %+v", tt.query, res)
		}
		x, _ := p.flags().Explain(res.Flag, map[string]any{"tier": "silver"})
		if tt.query != "flag=inf" && (res.Explanation == nil || res.ExplanationText != x.String()) {
			t.Errorf("%s: the explanation is not Explain's:\n%s\n%s", tt.query, res.ExplanationText, x)
		}
	}
	// JSON cannot hold +Inf: the explanation writes it as its text.
	var res debugResultJSON
	decodeDebug(t, h, "/evaluate?flag=inf", &res)
	if res.Explanation == nil || !strings.Contains(fmt.Sprint(res.Explanation), "+Inf") {
		t.Errorf("inf: %+v", res)
	}
	if u := p.Usage(); len(u.Missing) != 0 || u.Flags["hot"].Evaluations != 0 {
		t.Errorf("the handler's evaluations were counted: %+v", u)
	}
}

// The page shows the evaluation the query asks for, with the explanation
// as flagsnap eval --explain prints it, and its form sends what it shows.
func TestDebugPageEvaluation(t *testing.T) {
	p, _ := debugProvider(t, debugFlags)
	h := DebugHandler(p)
	ctx := `{"tier": "gold", "targetingKey": "u-1"}`
	w := debugGet(t, h, "/?"+url.Values{"flag": {"hot"}, "context": {ctx}}.Encode())
	body := w.Body.String()
	x, _ := p.flags().Explain("hot", map[string]any{"tier": "gold", "targetingKey": "u-1"})
	for _, want := range []string{
		`<dd id="result-value"><code>true</code></dd>`,
		`<dd id="result-variant">on</dd>`,
		`<dd id="result-reason">TARGETING_MATCH</dd>`,
		`<dd class="wide" id="result-error">none</dd>`,
		`<pre id="explanation">` + htmlEscaped(x.String()) + `</pre>`,
		`<input name="flag" value="hot"`,
		`>` + htmlEscaped(ctx) + `</textarea>`,
		`<form method="get" action="./" class="evaluate">`,
		`href="` + htmlEscaped("evaluate?"+url.Values{"flag": {"hot"}, "context": {ctx}}.Encode()) + `"`,
		`{&#34;owner&#34;:&#34;payments&#34;,&#34;team&#34;:&#34;checkout&#34;}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if w.Code != 200 {
		t.Errorf("status %d", w.Code)
	}
	w = debugGet(t, h, "/?flag=absent")
	if !strings.Contains(w.Body.String(), `<span class="bad">FLAG_NOT_FOUND</span>: flag &#34;absent&#34; not found`) {
		t.Errorf("a missing flag:\n%s", w.Body)
	}
}

// htmlEscaped is s as html/template writes text.
func htmlEscaped(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// Everything from a flag document or a request is text on the page.
func TestDebugPageEscapes(t *testing.T) {
	const script, img = `<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	doc := `{"metadata": {"set": ` + quote(img) + `}, "flags": {
	  ` + quote(script) + `: {"state": "ENABLED", "variants": {` + quote(script) + `: true, ` + quote(img) + `: false}, "defaultVariant": ` + quote(img) + `,
	     "metadata": {"owner": ` + quote(script) + `}},
	  ` + quote(img) + `: {"state": "ENABLED", "variants": {"a": ` + quote(script) + `}, "defaultVariant": "a"}}}`
	p, _ := debugProvider(t, doc)
	ctx := context.Background()
	p.BooleanEvaluation(ctx, script, false, nil)
	p.BooleanEvaluation(ctx, img+"-missing", false, nil)
	h := DebugHandler(p)
	for _, target := range []string{
		"/?" + url.Values{"flag": {script}, "q": {"<"}}.Encode(),
		"/?" + url.Values{"flag": {img}, "context": {`{"x": ` + quote(script) + `}`}, "q": {img}}.Encode(),
		"/?" + url.Values{"flag": {img}, "context": {img}}.Encode(),
	} {
		w := debugGet(t, h, target)
		body := w.Body.String()
		for _, raw := range []string{"<script", "<img", "onerror=alert(1)>"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s: the page holds %q raw", target, raw)
			}
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(body, "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("%s: the escaped forms are missing:\n%s", target, body)
		}
	}
}

// The policy's hash is the page's style sheet's, which is the only thing
// it allows.
func TestDebugStyleHash(t *testing.T) {
	p, _ := debugProvider(t, debugFlags)
	w := debugGet(t, DebugHandler(p), "/")
	css := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(w.Body.String())
	if css == nil {
		t.Fatal("no style sheet")
	}
	sum := sha256.Sum256([]byte(css[1]))
	hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "style-src "+hash+";") {
		t.Errorf("policy %q, style sheet hashes to %s", csp, hash)
	}
	if strings.Contains(w.Body.String(), " style=") {
		t.Error("the page has a style attribute, which the policy refuses")
	}
}

func TestDebugTableFilterSortAndBound(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"flags": {`)
	const n = 1200
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"flag-%04d": {"state": "ENABLED", "variants": {"on": true, "off": false}, "defaultVariant": "on"}`, i)
	}
	b.WriteString(`}}`)
	p, _ := debugProvider(t, b.String())
	ctx := context.Background()
	for i := range 5 {
		p.BooleanEvaluation(ctx, "flag-0777", false, nil)
		if i < 3 {
			p.BooleanEvaluation(ctx, "flag-1111", false, nil)
		}
	}
	h := DebugHandler(p)
	rowKeys := func(target string) ([]string, string) {
		w := debugGet(t, h, target)
		var keys []string
		for _, m := range regexp.MustCompile(`<td class="key"><code>([^<]*)</code>`).FindAllStringSubmatch(w.Body.String(), -1) {
			keys = append(keys, m[1])
		}
		return keys, w.Body.String()
	}
	for _, tt := range []struct {
		target       string
		rows         int
		first, last  string
		more         string
		matchedNote  string
		sortSelected string
	}{
		{"/", maxDebugRows, "flag-0000", "flag-0499", "700 more; filter by key.", "1200 of 1200 flags", "<strong>key</strong>"},
		{"/?q=FLAG-07", 100, "flag-0700", "flag-0799", "", "100 of 1200 flags match “FLAG-07”", "<strong>key</strong>"},
		{"/?sort=evaluations", maxDebugRows, "flag-0777", "flag-0497", "700 more", "", "<strong>most evaluated</strong>"},
		{"/?q=111&sort=evaluations", 11, "flag-1111", "flag-1119", "", "11 of 1200 flags", ""},
		{"/?sort=nonsense", maxDebugRows, "flag-0000", "flag-0499", "700 more", "", "<strong>key</strong>"},
		{"/?q=absent", 0, "", "", "", "0 of 1200 flags", ""},
	} {
		keys, body := rowKeys(tt.target)
		if len(keys) != tt.rows || (tt.rows > 0 && (keys[0] != tt.first || keys[len(keys)-1] != tt.last)) {
			t.Errorf("%s: %d rows %v…", tt.target, len(keys), keys[:min(len(keys), 3)])
		}
		if tt.rows == maxDebugRows && len(keys) > 1 && tt.target == "/?sort=evaluations" && keys[1] != "flag-1111" {
			t.Errorf("%s: second row %s", tt.target, keys[1])
		}
		if tt.more != "" != strings.Contains(body, `id="more"`) || !strings.Contains(body, tt.more) ||
			!strings.Contains(body, tt.matchedNote) || !strings.Contains(body, tt.sortSelected) {
			t.Errorf("%s: more %q, note %q, sort %q missing", tt.target, tt.more, tt.matchedNote, tt.sortSelected)
		}
		if len(body) > 1<<20 {
			t.Errorf("%s: the page is %d bytes", tt.target, len(body))
		}
	}
}

func TestDebugRowShares(t *testing.T) {
	p, m := debugProvider(t, debugFlags)
	ctx := context.Background()
	gold := openfeature.FlattenedContext{"tier": "gold"}
	for range 3 {
		p.BooleanEvaluation(ctx, "hot", false, gold)
	}
	p.BooleanEvaluation(ctx, "hot", false, nil)
	// hot loses its variant off, which keeps its count as a former one.
	if err := m.Set([]byte(strings.Replace(debugFlags, `"variants": {"on": true, "off": false}, "defaultVariant": "off"`, `"variants": {"on": true, "no": false}, "defaultVariant": "no"`, 1))); err != nil {
		t.Fatal(err)
	}
	rows, matched := debugRows(p.flags(), p.Usage(), "hot", "key")
	if matched != 1 || len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	want := []debugShare{{Name: "no", Default: true}, {Name: "on", Count: 3, Percent: 75}, {Name: "off", Count: 1, Percent: 25, Former: true}}
	if r := rows[0]; !reflect.DeepEqual(r.Shares, want) || r.Evaluations != 4 || !r.Targeting || r.DefaultVariant != "no" || r.Disabled {
		t.Errorf("row %+v", r)
	}
}

// Mounted as the documentation says, the page's relative links lead to
// the handler's endpoints, and the mount point without its slash leads to
// the page.
func TestDebugMounted(t *testing.T) {
	p, _ := debugProvider(t, debugFlags)
	mux := http.NewServeMux()
	mux.Handle("/debug/flags/", http.StripPrefix("/debug/flags", DebugHandler(p)))
	// A router that hands the handler its mount point without the slash.
	mux.Handle("/debug/other", http.StripPrefix("/debug/other", DebugHandler(p)))
	mux.Handle("/debug/other/", http.StripPrefix("/debug/other", DebugHandler(p)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := srv.Client()
	get := func(u string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	page := srv.URL + "/debug/flags/"
	_, body := get(page)
	base, _ := url.Parse(page)
	for _, m := range regexp.MustCompile(`href="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		ref, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
		if err != nil {
			t.Fatal(err)
		}
		if resp, _ := get(base.ResolveReference(ref).String()); resp.StatusCode != http.StatusOK {
			t.Errorf("link %s: %d", m[1], resp.StatusCode)
		}
	}
	// Without its slash, the mount point redirects to the page.
	resp, body := get(srv.URL + "/debug/other?q=hot")
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/debug/other/" || resp.Request.URL.RawQuery != "q=hot" || !strings.Contains(body, "<title>") {
		t.Errorf("redirect: %d %s", resp.StatusCode, resp.Request.URL)
	}
}

func TestJSONDepth(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{`{}`, 1},
		{`{"a": [1, {"b": []}]}`, 4},
		{`{"a": "[[[{{{"}`, 1},
		{`{"a": "\"[[["}`, 1},
		{`{"a\\": [[]]}`, 3},
		{`[[`, 2},
	} {
		if got := jsonDepth(tt.text); got != tt.want {
			t.Errorf("jsonDepth(%s) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// A flag with many variants lists the first of them and counts the rest.
func TestDebugRowVariantsBound(t *testing.T) {
	info := evaluator.FlagInfo{Key: "many"}
	for i := range maxDebugVariants + 5 {
		info.Variants = append(info.Variants, fmt.Sprintf("v%02d", i))
	}
	row := debugRowOf(info, FlagUsage{Evaluations: 3, Variants: map[string]uint64{"v00": 1, "gone": 2}})
	if len(row.Shares) != maxDebugVariants || row.MoreVariants != 6 || row.Shares[0] != (debugShare{Name: "v00", Count: 1, Percent: 33}) {
		t.Errorf("%d shares, %d more, first %+v", len(row.Shares), row.MoreVariants, row.Shares[0])
	}
}

// A provider polling a URL shows its unchanged polls beside the flag
// sets it received.
func TestDebugPageShowsUnchangedPolls(t *testing.T) {
	p, _, _, err := urlProvider(t, httporigin.New(httporigin.Document(flagsV1)))
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	eventually(t, "two unchanged polls", func() bool { return p.SourceStatus().Unchanged >= 2 })
	body := debugGet(t, DebugHandler(p), "/").Body.String()
	if !regexp.MustCompile(`1 received, 1 applied, 0 rejected, \d+ polls unchanged`).MatchString(body) {
		t.Errorf("the page does not show the unchanged polls:\n%s", body)
	}
}

// debugOverride turns color blue and adds a flag of its own, in YAML, as
// a person writes an override during an incident.
const debugOverride = `flags:
  color:
    state: ENABLED
    variants: {red: red, blue: blue}
    defaultVariant: blue
  local:
    state: ENABLED
    variants: {on: true}
    defaultVariant: on
`

// debugFlagsJSON is /flags with overrides, as a client reads it.
type debugFlagsJSON struct {
	Layers []debugLayer `json:"layers"`
	Flags  map[string]struct {
		Layer      string         `json:"layer"`
		Definition map[string]any `json:"definition"`
	} `json:"flags"`
}

// With an override file over a flag file, /flags lists the flags in
// force: an overridden flag with the override's definition and a flag
// only the override defines, each marked with the override's path; each
// layer's document is served as it is; the page marks the same flags and
// lists the override. Once the override is gone, /flags is the source's
// document again.
func TestDebugFlagsWithOverrides(t *testing.T) {
	dir := t.TempDir()
	main, over := filepath.Join(dir, "flags.json"), filepath.Join(dir, "override.yaml")
	writeFile(t, main, debugFlags)
	writeFile(t, over, debugOverride)
	p, err := NewProvider(WithFile(main), WithoutEnv(), WithOverrideFile(over))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Shutdown)
	h := DebugHandler(p)
	if err := p.Init(openfeature.EvaluationContext{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the override in force", func() bool { return len(p.SourceStatus().Overridden) == 2 })

	var view debugFlagsJSON
	decodeDebug(t, h, "/flags", &view)
	if want := []debugLayer{{main, "flags?layer=0"}, {over, "flags?layer=1"}}; !reflect.DeepEqual(view.Layers, want) {
		t.Errorf("layers %+v, want %+v", view.Layers, want)
	}
	for key, want := range map[string]struct{ layer, defaultVariant string }{
		"color": {over, "blue"}, "local": {over, "on"}, "hot": {"", "off"}, "broken": {"", "nope"},
	} {
		f, ok := view.Flags[key]
		if !ok || f.Layer != want.layer || f.Definition["defaultVariant"] != want.defaultVariant {
			t.Errorf("%s: %+v, want layer %q and defaultVariant %q", key, f, want.layer, want.defaultVariant)
		}
	}
	if len(view.Flags) != 6 {
		t.Errorf("%d flags, want the 5 of the file and the override's own", len(view.Flags))
	}

	for _, tt := range []struct {
		target, body, contentType string
		status                    int
	}{
		{"/flags?layer=0", debugFlags, "application/json", 200},
		{"/flags?layer=1", debugOverride, "application/yaml; charset=utf-8", 200},
		{"/flags?layer=2", `"no layer \"2\": the layers in force are 0 to 1"`, "application/json", 404},
		{"/flags?layer=x", `no layer`, "application/json", 404},
	} {
		w := debugGet(t, h, tt.target)
		if w.Code != tt.status || w.Header().Get("Content-Type") != tt.contentType ||
			tt.status == 200 && w.Body.String() != tt.body || !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%s: %d %q %.200q", tt.target, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	}
	if sum := sha256.Sum256(debugGet(t, h, "/flags?layer=0").Body.Bytes()); fmt.Sprintf("%x", sum) != p.SourceStatus().Digest {
		t.Error("the source's document does not hash to the status's digest")
	}

	page := debugGet(t, h, "/").Body.String()
	mark := `<div class="layer small">from override ` + htmlEscaped(over) + `</div>`
	for _, want := range []string{
		`<tr class="overridden">` + "\n" + `<td class="key"><code>color</code>` + mark,
		`<tr class="overridden">` + "\n" + `<td class="key"><code>local</code>` + mark,
		"<tr>\n" + `<td class="key"><code>hot</code></td>`,
		`<span class="warn">2 from overrides</span>`,
		`<dt class="wide">override</dt><dd class="wide override"><code>` + htmlEscaped(over) + `</code> <span class="state state-serving">serving</span> 2 flags`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	if err := os.Remove(over); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the override withdrawn", func() bool { return len(p.SourceStatus().Overridden) == 0 })
	if w := debugGet(t, h, "/flags"); w.Body.String() != debugFlags {
		t.Errorf("/flags without the override: %.80q", w.Body)
	}
	if page := debugGet(t, h, "/").Body.String(); strings.Contains(page, "from override") || !strings.Contains(page, `<span class="state state-absent">absent</span> 0 flags`) {
		t.Errorf("the page without the override still marks a flag, or does not say it is absent")
	}
}

// definitionsOf finds each flag's definition where the evaluator does:
// in an object or an array of flags, JSON or YAML.
func TestDebugDefinitionsOf(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      map[string]string
	}{
		{"object", `{"flags": {"a": {"state": "ENABLED"}, "b": null, "a": {"state": "DISABLED"}}}`,
			map[string]string{"a": `{"state": "DISABLED"}`, "b": `null`}},
		{"array", "\xef\xbb\xbf" + `{"flags": [{"key": "a", "n": 1}, {"n": 2}, {"key": "a", "n": 3}, {"Key": "b"}, 7]}`,
			map[string]string{"a": `{"key": "a", "n": 3}`, "flags[1]": `{"n": 2}`, "flags[3]": `{"Key": "b"}`, "flags[4]": `7`}},
		{"YAML", "flags:\n  a: {state: ENABLED, variants: {1: x}}\n  2: {n: 2.5}\n",
			map[string]string{"a": `{"state":"ENABLED","variants":{"1":"x"}}`, "2": `{"n":2.5}`}},
		{"YAML array", "flags:\n- key: a\n- {n: 1}\n", map[string]string{"a": `{"key":"a"}`, "flags[1]": `{"n":1}`}},
	} {
		defs, err := definitionsOf([]byte(tt.doc))
		got := map[string]string{}
		for k, v := range defs {
			got[k] = string(v)
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v %v, want %v", tt.name, got, err, tt.want)
		}
	}
	for _, doc := range []string{`{"flags": 1}`, `{}`, "- 1\n", "flags: [\n"} {
		if _, err := definitionsOf([]byte(doc)); err == nil {
			t.Errorf("%q: no error", doc)
		}
	}
}
